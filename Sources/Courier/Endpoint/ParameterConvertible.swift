import Foundation

/// A value that can be a request parameter as it is, without wrapping it in a ``ParameterValue``
/// case.
///
/// Strings, integers, floating-point numbers, Booleans, `URL`, `UUID`, optionals (`nil` is
/// ``ParameterValue/null``, which URL encoding leaves out), arrays, and dictionaries with string
/// keys of these all conform, so parameters built from variables read like literals:
///
/// ```swift
/// var task: HTTPTask {
///     .parameters(["q": query, "page": page, "ref": ref, "labels": labels], encoding: .url)
/// }
/// ```
///
/// Your own types conform by saying how they are sent; an enum with a raw value, or an
/// `Encodable` type (sent as it encodes, see ``ParameterValue/init(encoding:)``), needs nothing
/// more than the declaration:
///
/// ```swift
/// enum Sort: String, ParameterConvertible { case stars, updated }
/// struct Filter: Encodable, ParameterConvertible { var state = "open"; var labels: [String] }
/// ```
///
/// The ``HTTPTask`` cases that take ``Parameters`` each have a function of the same name taking
/// `[String: any ParameterConvertible]`; a dictionary that mixes variables and literals uses it.
/// A literal that only a ``ParameterValue`` can express (`.string(x)`, `nil`, an array that
/// mixes types) belongs in a dictionary of literals, or spelled as a ``ParameterValue``.
public protocol ParameterConvertible {
    /// The value as a parameter.
    var parameterValue: ParameterValue { get }
}

extension ParameterConvertible where Self: RawRepresentable, RawValue: ParameterConvertible {
    /// The raw value as a parameter.
    public var parameterValue: ParameterValue { rawValue.parameterValue }
}

extension ParameterConvertible where Self: RawRepresentable & Encodable, RawValue: ParameterConvertible {
    /// The raw value as a parameter (a `Codable` enum with raw values is sent as its raw value).
    public var parameterValue: ParameterValue { rawValue.parameterValue }
}

extension ParameterValue: ParameterConvertible {
    public var parameterValue: ParameterValue { self }

    /// Creates a parameter from any value that can be one.
    /// - Parameter value: The value; see ``ParameterConvertible``.
    public init(_ value: some ParameterConvertible) {
        self = value.parameterValue
    }
}

extension String: ParameterConvertible {
    public var parameterValue: ParameterValue { .string(self) }
}

extension Substring: ParameterConvertible {
    public var parameterValue: ParameterValue { .string(String(self)) }
}

extension Character: ParameterConvertible {
    public var parameterValue: ParameterValue { .string(String(self)) }
}

extension Bool: ParameterConvertible {
    public var parameterValue: ParameterValue { .bool(self) }
}

extension Double: ParameterConvertible {
    public var parameterValue: ParameterValue { .double(self) }
}

extension Float: ParameterConvertible {
    /// The `Double` written with the `Float`'s own shortest digits: `Float(0.1)` is sent as `0.1`,
    /// as `JSONEncoder` and Alamofire write it, not as `0.10000000149011612` (its binary value as
    /// a `Double`; found by review).
    public var parameterValue: ParameterValue { .double(shortestDouble) }

    var shortestDouble: Double {
        guard isFinite else { return Double(self) }
        return Double(description) ?? Double(self)
    }
}

extension BinaryInteger {
    /// An ``ParameterValue/int(_:)``; a value outside `Int`'s range (a large `UInt64`, or an
    /// `Int64` on a 32-bit system) is sent as its decimal digits, ``ParameterValue/string(_:)``,
    /// so no digit is lost.
    var integerParameter: ParameterValue {
        Int(exactly: self).map(ParameterValue.int) ?? .string(String(self))
    }
}

// Integers: `.int`, or their digits beyond `Int`'s range (see `integerParameter`).
extension Int: ParameterConvertible { public var parameterValue: ParameterValue { .int(self) } }
extension Int8: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }
extension Int16: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }
extension Int32: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }
extension Int64: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }
extension UInt: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }
extension UInt8: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }
extension UInt16: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }
extension UInt32: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }
extension UInt64: ParameterConvertible { public var parameterValue: ParameterValue { integerParameter } }

extension URL: ParameterConvertible {
    /// The URL's absolute string.
    public var parameterValue: ParameterValue { .string(absoluteString) }
}

extension UUID: ParameterConvertible {
    /// The UUID's string, upper case (`uuidString`).
    public var parameterValue: ParameterValue { .string(uuidString) }
}

extension Optional: ParameterConvertible where Wrapped: ParameterConvertible {
    /// The wrapped value's, or ``ParameterValue/null`` for `nil`.
    public var parameterValue: ParameterValue { self?.parameterValue ?? .null }
}

extension Array: ParameterConvertible where Element: ParameterConvertible {
    public var parameterValue: ParameterValue { .array(map(\.parameterValue)) }
}

extension Set: ParameterConvertible where Element: ParameterConvertible & Comparable {
    /// The elements in ascending order, so the same set always sends the same parameters.
    public var parameterValue: ParameterValue { .array(sorted().map(\.parameterValue)) }
}

extension Dictionary: ParameterConvertible where Key == String, Value: ParameterConvertible {
    public var parameterValue: ParameterValue { .dictionary(mapValues(\.parameterValue)) }
}

extension Dictionary where Key == String, Value == any ParameterConvertible {
    /// The parameters these values make.
    var parameters: Parameters { mapValues(\.parameterValue) }
}

extension HTTPTask {
    /// ``parameters(_:encoding:)-enum.case`` from values that are not ``ParameterValue``s:
    /// `.parameters(["q": query, "page": page], encoding: .url)`.
    public static func parameters(
        _ parameters: [String: any ParameterConvertible], encoding: ParameterEncoding
    ) -> HTTPTask {
        .parameters(parameters.parameters, encoding: encoding)
    }

    /// ``compositeData(_:urlParameters:)-enum.case`` with URL parameters from any convertible values.
    public static func compositeData(_ data: Data, urlParameters: [String: any ParameterConvertible]) -> HTTPTask {
        .compositeData(data, urlParameters: urlParameters.parameters)
    }

    /// ``compositeParameters(bodyParameters:bodyEncoding:urlParameters:)-enum.case`` from any
    /// convertible values.
    public static func compositeParameters(
        bodyParameters: [String: any ParameterConvertible], bodyEncoding: ParameterEncoding,
        urlParameters: [String: any ParameterConvertible]
    ) -> HTTPTask {
        .compositeParameters(
            bodyParameters: bodyParameters.parameters, bodyEncoding: bodyEncoding,
            urlParameters: urlParameters.parameters)
    }

    /// ``uploadFile(_:urlParameters:)-enum.case`` with URL parameters from any convertible values.
    public static func uploadFile(_ file: URL, urlParameters: [String: any ParameterConvertible]) -> HTTPTask {
        .uploadFile(file, urlParameters: urlParameters.parameters)
    }

    /// ``uploadMultipart(_:urlParameters:)-enum.case`` with URL parameters from any convertible
    /// values.
    public static func uploadMultipart(
        _ form: MultipartFormData, urlParameters: [String: any ParameterConvertible]
    ) -> HTTPTask {
        .uploadMultipart(form, urlParameters: urlParameters.parameters)
    }

    /// ``downloadParameters(_:encoding:destination:)-enum.case`` from any convertible values.
    public static func downloadParameters(
        _ parameters: [String: any ParameterConvertible], encoding: ParameterEncoding,
        destination: DownloadDestination
    ) -> HTTPTask {
        .downloadParameters(parameters.parameters, encoding: encoding, destination: destination)
    }
}
