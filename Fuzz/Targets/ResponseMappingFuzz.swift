// libFuzzer target: arbitrary bodies and key paths through the response mappings. Any input must
// give a value or a typed error, never a crash. Built against Courier by scripts/fuzz.
import Foundation

@testable import Courier

/// Decodes any JSON, to exercise `map(_:atKeyPath:)` on every shape.
enum AnyJSON: Decodable {
    case string(String), number(Double), bool(Bool), null, array([AnyJSON]), object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([AnyJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: AnyJSON].self))
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseMapping(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The first bytes up to a newline are a key path; the rest is the body.
    let split = bytes.firstIndex(of: 0x0A) ?? 0
    let keyPath = String(decoding: bytes[..<split], as: UTF8.self)
    let body = Data(bytes[(split < bytes.count ? split + 1 : split)...])
    let response = Response(statusCode: 200, data: body)

    _ = try? response.mapJSON()
    _ = try? response.mapJSON(failsOnEmptyData: false)
    _ = try? response.mapString()
    _ = try? response.mapString(atKeyPath: keyPath)
    _ = try? response.map(AnyJSON.self)
    _ = try? response.map(AnyJSON.self, atKeyPath: keyPath)
    _ = try? response.map([Int].self, atKeyPath: keyPath, failsOnEmptyData: false)
    _ = try? response.map(String.self, atKeyPath: keyPath)
    _ = try? response.filterSuccessfulStatusCodes()
    return 0
}
