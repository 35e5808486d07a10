/// Request parameters: string keys to typed, `Sendable`, `Hashable` values.
///
/// Write them as literals: `["q": "swift", "page": 2, "tags": ["a", "b"], "filter": ["open": true]]`.
/// Variables go in as they are, `["q": query, "page": page, "ref": ref]`, when their types are
/// ``ParameterConvertible`` (strings, numbers, Booleans, optionals, arrays and dictionaries of
/// them, and your own types): every ``HTTPTask`` case that takes parameters has a function of the
/// same name that takes `[String: any ParameterConvertible]`.
public typealias Parameters = [String: ParameterValue]

/// One parameter value: a JSON-like tree that URL and JSON encodings both understand.
public enum ParameterValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// An integer.
    case int(Int)
    /// A floating-point number. Non-finite values (NaN, infinity) cannot be encoded and throw
    /// ``CourierError/parameterEncoding(_:)``.
    case double(Double)
    /// A Boolean; URL encoding writes it as ``URLEncoding/BoolEncoding`` says.
    case bool(Bool)
    /// An ordered list; URL encoding writes it as ``URLEncoding/ArrayEncoding`` says.
    case array([ParameterValue])
    /// A nested object; URL encoding writes its keys as `parent[child]`, sorted.
    case dictionary([String: ParameterValue])
    /// No value: JSON writes `null`; URL encoding leaves the key out.
    case null
}

extension ParameterValue {
    /// How deep parameters may nest: a top-level value is at depth 1, each array or dictionary
    /// adds one. Deeper parameters fail with ``CourierError/limitExceeded(_:)``
    /// (``LimitExceeded/parameterDepth(limit:)``) before any encoding, so no tree can overflow
    /// the stack of an encoder. 64: no API nests parameters anywhere near that deep.
    public static let maximumDepth = 64

    /// Throws when any value in `parameters` nests deeper than `limit`. Iterative: safe for trees
    /// of any depth.
    /// The key of the first NaN or infinite `.double` (in key order), written as URL encoding
    /// names it (`outer[inner]`, `list[]`); `nil` when every number is finite. Parameters were
    /// checked for depth first.
    static func nonFiniteKey(in parameters: Parameters) -> String? {
        var stack: [(ParameterValue, String)] = parameters.sorted { $0.key > $1.key }.map { ($0.value, $0.key) }
        while let (value, key) = stack.popLast() {
            switch value {
            case .double(let number) where !number.isFinite: return key
            case .array(let elements): stack.append(contentsOf: elements.reversed().map { ($0, key + "[]") })
            case .dictionary(let nested):
                stack.append(contentsOf: nested.sorted { $0.key > $1.key }.map { ($0.value, "\(key)[\($0.key)]") })
            default: continue
            }
        }
        return nil
    }

    static func checkDepth(of parameters: Parameters, limit: Int = maximumDepth) throws(CourierError) {
        var stack: [(ParameterValue, Int)] = []
        for value in parameters.values {
            switch value {
            case .array, .dictionary: stack.append((value, 1))
            default: continue
            }
        }
        while let (value, depth) = stack.popLast() {
            guard depth <= limit else { throw .limitExceeded(.parameterDepth(limit: limit)) }
            switch value {
            case .array(let elements):
                for element in elements { stack.append((element, depth + 1)) }
            case .dictionary(let nested):
                for element in nested.values { stack.append((element, depth + 1)) }
            default:
                continue
            }
        }
    }
}

extension ParameterValue: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension ParameterValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension ParameterValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension ParameterValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension ParameterValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
}

extension ParameterValue: ExpressibleByDictionaryLiteral {
    /// Creates a nested object. A repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension ParameterValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension ParameterValue: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .dictionary(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}
