import Foundation

extension ParameterValue {
    /// The parameters an `Encodable` value encodes to: objects become ``dictionary(_:)``, arrays
    /// ``array(_:)``, numbers, strings and Booleans their cases, `nil` ``null``. A `Date` becomes
    /// its ISO 8601 string (`2026-11-22T10:00:00Z`), a `URL` its absolute string, `Data` its
    /// Base64 string, a `Decimal` its decimal digits.
    /// - Parameter value: The value.
    /// - Throws: The error the value's `encode(to:)` throws.
    public init(encoding value: some Encodable) throws {
        let root = ParameterNode()
        try ParameterNode.encode(value, into: root, codingPath: [])
        self = root.resolved
    }
}

extension ParameterConvertible where Self: Encodable {
    /// The value's encoding (``ParameterValue/init(encoding:)``), so an `Encodable` type becomes a
    /// parameter by declaring the conformance: `extension Filter: ParameterConvertible {}`. A
    /// value whose `encode(to:)` throws is ``ParameterValue/null``; call
    /// ``ParameterValue/init(encoding:)`` to see the error.
    public var parameterValue: ParameterValue {
        (try? ParameterValue(encoding: self)) ?? .null
    }
}

/// One value being encoded: a leaf, an object or an array whose members are filled in as the
/// containers write them.
final class ParameterNode {
    enum Content {
        case empty
        case value(ParameterValue)
        case object([String: ParameterNode])
        case array([ParameterNode])
    }

    var content = Content.empty

    var resolved: ParameterValue {
        switch content {
        case .empty: .dictionary([:])
        case .value(let value): value
        case .object(let members): .dictionary(members.mapValues(\.resolved))
        case .array(let elements): .array(elements.map(\.resolved))
        }
    }

    func member(_ key: String) -> ParameterNode {
        var members: [String: ParameterNode] = [:]
        if case .object(let existing) = content { members = existing }
        if let node = members[key] { return node }
        let node = ParameterNode()
        members[key] = node
        content = .object(members)
        return node
    }

    func appended() -> ParameterNode {
        var elements: [ParameterNode] = []
        if case .array(let existing) = content { elements = existing }
        let node = ParameterNode()
        elements.append(node)
        content = .array(elements)
        return node
    }

    var count: Int {
        if case .array(let elements) = content { return elements.count }
        return 0
    }

    /// Encodes `value` into `node`: the types parameters know directly, else its own `encode(to:)`.
    static func encode(_ value: some Encodable, into node: ParameterNode, codingPath: [any CodingKey]) throws {
        switch value {
        case let value as ParameterValue: node.content = .value(value)
        case let value as String: node.content = .value(.string(value))
        case let value as Bool: node.content = .value(.bool(value))
        case let value as Double: node.content = .value(.double(value))
        case let value as Float: node.content = .value(.double(value.shortestDouble))
        case let value as Int: node.content = .value(.int(value))
        case let value as any BinaryInteger: node.content = .value(value.integerParameter)
        case let value as Decimal: node.content = .value(.string(value.description))
        case let value as URL: node.content = .value(.string(value.absoluteString))
        case let value as Data: node.content = .value(.string(value.base64EncodedString()))
        case let value as Date:
            node.content = .value(.string(value.formatted(.iso8601)))
        default:
            try value.encode(to: ParameterEncoderImpl(node: node, codingPath: codingPath))
        }
    }
}

private struct ParameterEncoderImpl: Encoder {
    let node: ParameterNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([:]) }
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(node: node, codingPath: codingPath)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: ParameterNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws {
        node.member(key.stringValue).content = .value(.null)
    }

    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        try ParameterNode.encode(value, into: node.member(key.stringValue), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        ParameterEncoderImpl(node: node.member(key.stringValue), codingPath: codingPath + [key])
            .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ParameterEncoderImpl(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ParameterEncoderImpl(node: node.member("super"), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ParameterEncoderImpl(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: ParameterNode
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws {
        node.appended().content = .value(.null)
    }

    mutating func encode(_ value: some Encodable) throws {
        let key = IndexKey(count)
        try ParameterNode.encode(value, into: node.appended(), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let key = IndexKey(count)
        return ParameterEncoderImpl(node: node.appended(), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = IndexKey(count)
        return ParameterEncoderImpl(node: node.appended(), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let key = IndexKey(count)
        return ParameterEncoderImpl(node: node.appended(), codingPath: codingPath + [key])
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let node: ParameterNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws {
        node.content = .value(.null)
    }

    mutating func encode(_ value: some Encodable) throws {
        try ParameterNode.encode(value, into: node, codingPath: codingPath)
    }
}
