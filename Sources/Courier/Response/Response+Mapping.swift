import Foundation

extension Response {
    /// Parses the body as JSON (objects, arrays and top-level scalars).
    /// - Parameter failsOnEmptyData: Whether an empty body is an error. When `false`, an empty body
    ///   gives `NSNull()`. Default: `true`.
    /// - Returns: The parsed value (`[String: Any]`, `[Any]`, `String`, `NSNumber` or `NSNull`).
    /// - Throws: ``CourierError/jsonMapping(_:_:)`` when the body is not JSON.
    public func mapJSON(failsOnEmptyData: Bool = true) throws(CourierError) -> Any {
        if data.isEmpty && !failsOnEmptyData { return NSNull() }
        do {
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw .jsonMapping(error, self)
        }
    }

    /// Reads the body as a UTF-8 string, or the string at a key path inside a JSON body.
    /// - Parameter keyPath: A dotted path through JSON objects, e.g. `"data.user.name"`. `nil`
    ///   (the default) reads the whole body.
    /// - Returns: The string.
    /// - Throws: ``CourierError/stringMapping(_:)`` when the body is not UTF-8, or the key path is
    ///   missing or does not lead to a string.
    public func mapString(atKeyPath keyPath: String? = nil) throws(CourierError) -> String {
        guard let keyPath else {
            guard let string = UTF8Text.string(data) else {
                throw .stringMapping(self)
            }
            return string
        }
        guard let json = try? mapJSON(), let string = JSONKeyPath.value(in: json, at: keyPath) as? String
        else {
            throw .stringMapping(self)
        }
        return string
    }

    /// Decodes the body, or the value at a key path inside it, as `D`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - keyPath: A dotted path through JSON objects (matched against the raw JSON keys, before
    ///     any key decoding strategy). Scalars at the path decode too (`Int`, `String`, …).
    ///     Default: `nil`, the whole body.
    ///   - decoder: The decoder. Default: a plain `JSONDecoder`.
    ///   - failsOnEmptyData: Whether an empty body (or a `null` at the key path) is an error. When
    ///     `false`, it decodes `D` from `{}` and then from `[]`, so types whose properties are all
    ///     optional, and arrays, come back empty. Default: `true`.
    /// - Returns: The decoded value.
    /// - Throws: ``CourierError/objectMapping(_:_:)`` with the decoding error, or
    ///   ``CourierError/jsonMapping(_:_:)`` when the body is not JSON or the key path is missing.
    public func map<D: Decodable>(
        _ type: D.Type,
        atKeyPath keyPath: String? = nil,
        using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true
    ) throws(CourierError) -> D {
        var payload = data
        if let keyPath, !data.isEmpty {
            let json = try mapJSON()
            guard let value = JSONKeyPath.value(in: json, at: keyPath) else {
                throw .jsonMapping(JSONKeyPath.Missing(keyPath: keyPath), self)
            }
            if value is NSNull {
                payload = Data()
            } else {
                do {
                    payload = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
                } catch {
                    throw .jsonMapping(error, self)
                }
            }
        }
        if payload.isEmpty {
            if failsOnEmptyData {
                let context = DecodingError.Context(codingPath: [], debugDescription: "The body is empty.")
                throw .objectMapping(DecodingError.dataCorrupted(context), self)
            }
            for empty in ["{}", "[]"] {
                if let value = try? decoder.decode(D.self, from: Data(empty.utf8)) { return value }
            }
            let context = DecodingError.Context(
                codingPath: [], debugDescription: "The body is empty and \(D.self) cannot decode from {} or [].")
            throw .objectMapping(DecodingError.valueNotFound(D.self, context), self)
        }
        do {
            return try decoder.decode(D.self, from: payload)
        } catch {
            throw .objectMapping(error, self)
        }
    }
}

/// Dotted key paths through parsed JSON objects.
enum JSONKeyPath {
    /// The key path led nowhere.
    struct Missing: Error, CustomStringConvertible {
        let keyPath: String
        var description: String { "nothing at key path '\(keyPath)'" }
    }

    static func value(in json: Any, at keyPath: String) -> Any? {
        var current: Any = json
        for key in keyPath.split(separator: ".", omittingEmptySubsequences: false) {
            guard let object = current as? [String: Any], let next = object[String(key)] else { return nil }
            current = next
        }
        return current
    }
}
