// libFuzzer target: base URLs, paths and parameter trees made from arbitrary bytes go through the
// URL rules and every parameter encoding. Any input must give a URL or a typed error, never a crash.
// Built against Courier (compiled once, testing enabled) by scripts/fuzz.
import Foundation

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Reads values out of the fuzzer's bytes.
struct ByteReader {
    var bytes: [UInt8]
    var index = 0

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func string() -> String {
        let length = Int(byte() % 24)
        var utf8: [UInt8] = []
        for _ in 0..<length { utf8.append(byte()) }
        return String(decoding: utf8, as: UTF8.self)
    }

    mutating func value(depth: Int) -> ParameterValue {
        switch byte() % (depth > 8 ? 5 : 7) {
        case 0: return .string(string())
        case 1: return .int(Int(Int8(bitPattern: byte())) * Int(byte()))
        case 2: return .double(Double(bitPattern: UInt64(byte()) << 56 | UInt64(byte()) << 8 | UInt64(byte())))
        case 3: return .bool(byte() & 1 == 1)
        case 4: return .null
        case 5: return .array((0..<Int(byte() % 4)).map { _ in value(depth: depth + 1) })
        default:
            var nested: [String: ParameterValue] = [:]
            for _ in 0..<Int(byte() % 4) { nested[string()] = value(depth: depth + 1) }
            return .dictionary(nested)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURLEncoding(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var reader = ByteReader(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    let base = ["https://api.example.com", "http://127.0.0.1:8080/v1?key=a", "https://h/p/", "x:"][Int(reader.byte() % 4)]
        + reader.string()
    let path = reader.string()
    var parameters: Parameters = [:]
    for _ in 0..<Int(reader.byte() % 5) { parameters[reader.string()] = reader.value(depth: 0) }
    // Now and then, a chain far deeper than the depth limit (built without recursion), so the limit
    // and everything before it see deep trees: up to 5,100 levels.
    if reader.byte() % 4 == 0 {
        var chain = reader.value(depth: 0)
        for level in 0..<(Int(reader.byte()) * 20) { chain = level.isMultiple(of: 2) ? [chain] : ["k": chain] }
        parameters[reader.string()] = chain
    }
    let encodings: [ParameterEncoding] = [
        .url, .queryString, .httpBody, .json,
        .url(URLEncoding(destination: .queryString, arrayEncoding: .indexInBrackets, boolEncoding: .literal)),
    ]
    let encoding = encodings[Int(reader.byte() % UInt8(encodings.count))]
    let method: HTTPMethod = [.get, .post, .delete, "PROP FIND", ""][Int(reader.byte() % 5)]
    let headerName = reader.string()
    let headerValue = reader.string()

    guard let baseURL = URL(string: base) else { return 0 }
    struct Target: TargetType {
        let baseURL: URL
        let path: String
        let method: HTTPMethod
        let task: HTTPTask
        let headers: [String: String]
    }
    let tasks: [HTTPTask] = [
        .parameters(parameters, encoding: encoding),
        .compositeParameters(bodyParameters: parameters, bodyEncoding: encoding, urlParameters: parameters),
        .compositeData(Data(path.utf8), urlParameters: parameters),
    ]
    for task in tasks {
        let target = Target(
            baseURL: baseURL, path: path, method: method, task: task, headers: [headerName: headerValue])
        do {
            let request = try Endpoint(target: target).urlRequest()
            // A built request always has a URL with a scheme, and passes the checks made before
            // sending (or fails them with a typed error).
            if request.url?.scheme == nil { fatalError("request without a URL scheme") }
            try RequestValidation.validate(request)
            try RequestValidation.validateDestination(request.url, limits: .default)
        } catch {
            // Typed errors are the expected outcome for bad input.
            _ = error.localizedDescription
        }
    }
    return 0
}
