/// How ``Parameters`` become part of a request.
///
/// - ``url``: URL encoding, into the query string for `GET`, `HEAD` and `DELETE` and into a
///   form body (`application/x-www-form-urlencoded; charset=utf-8`) for other methods.
/// - ``queryString``: always the query string.
/// - ``httpBody``: always a form body.
/// - ``json``: a JSON body (`application/json`), keys sorted.
/// - ``url(_:)``: URL encoding with your own ``URLEncoding`` options.
///
/// A content type is only set when the target's headers do not already set one.
public struct ParameterEncoding: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case url(URLEncoding)
        case json
    }

    let kind: Kind

    /// URL encoding with default options, placed by method (see the type's summary).
    public static let url = ParameterEncoding(kind: .url(URLEncoding()))
    /// URL encoding with default options, always in the query string.
    public static let queryString = ParameterEncoding(kind: .url(URLEncoding(destination: .queryString)))
    /// URL encoding with default options, always in a form body.
    public static let httpBody = ParameterEncoding(kind: .url(URLEncoding(destination: .httpBody)))
    /// A JSON body with sorted keys.
    public static let json = ParameterEncoding(kind: .json)

    /// URL encoding with custom options.
    /// - Parameter options: Where the parameters go and how arrays and Booleans are written.
    /// - Returns: The encoding.
    public static func url(_ options: URLEncoding) -> ParameterEncoding {
        ParameterEncoding(kind: .url(options))
    }
}

/// Options for URL (form) encoding of ``Parameters``.
///
/// Keys are sorted, so the same parameters always give the same bytes. Keys and values are
/// percent-encoded per RFC 3986: everything but `A–Z a–z 0–9 - . _ ~` is escaped (a space is `%20`).
/// Nested objects are written `parent[child]=value`; `.null` values leave their key out.
public struct URLEncoding: Sendable, Hashable {
    /// Where URL-encoded parameters go.
    public enum Destination: Sendable, Hashable {
        /// The query string for `GET`, `HEAD` and `DELETE`; a form body otherwise.
        case methodDependent
        /// Always the query string.
        case queryString
        /// Always a form body.
        case httpBody
    }

    /// How array values are written.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `key[]=a&key[]=b` (the default, as Alamofire and Moya write them).
        case brackets
        /// `key=a&key=b`.
        case noBrackets
        /// `key[0]=a&key[1]=b`.
        case indexInBrackets
    }

    /// How Boolean values are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `1` and `0` (the default, as Alamofire and Moya write them).
        case numeric
        /// `true` and `false`.
        case literal
    }

    /// Where the parameters go. Default: ``Destination/methodDependent``.
    public var destination: Destination
    /// How arrays are written. Default: ``ArrayEncoding/brackets``.
    public var arrayEncoding: ArrayEncoding
    /// How Booleans are written. Default: ``BoolEncoding/numeric``.
    public var boolEncoding: BoolEncoding

    /// Creates URL encoding options.
    /// - Parameters:
    ///   - destination: Where the parameters go. Default: ``Destination/methodDependent``.
    ///   - arrayEncoding: How arrays are written. Default: ``ArrayEncoding/brackets``.
    ///   - boolEncoding: How Booleans are written. Default: ``BoolEncoding/numeric``.
    public init(
        destination: Destination = .methodDependent,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Whether parameters for `method` go into the query string.
    func usesQueryString(for method: HTTPMethod) -> Bool {
        switch destination {
        case .queryString: true
        case .httpBody: false
        case .methodDependent: method == .get || method == .head || method == .delete
        }
    }

    /// Encodes `parameters` as `key=value` pairs joined by `&`, already percent-encoded.
    /// - Throws: ``ParameterEncodingFailure`` for a non-finite number.
    func encode(_ parameters: Parameters) throws(ParameterEncodingFailure) -> String {
        var output = ""
        for key in parameters.keys.sorted() {
            try append(key: PercentEncoding.escape(key), value: parameters[key]!, to: &output)
        }
        return output
    }

    private func append(
        key: String, value: ParameterValue, to output: inout String
    )
        throws(ParameterEncodingFailure)
    {
        switch value {
        case .null:
            return
        case .dictionary(let nested):
            for nestedKey in nested.keys.sorted() {
                try append(
                    key: key + "%5B" + PercentEncoding.escape(nestedKey) + "%5D",
                    value: nested[nestedKey]!, to: &output)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                let elementKey =
                    switch arrayEncoding {
                    case .brackets: key + "%5B%5D"
                    case .noBrackets: key
                    case .indexInBrackets: key + "%5B\(index)%5D"
                    }
                try append(key: elementKey, value: element, to: &output)
            }
        case .string(let string):
            appendPair(key, PercentEncoding.escape(string), to: &output)
        case .int(let int):
            appendPair(key, String(int), to: &output)
        case .double(let double):
            guard double.isFinite else { throw .nonFiniteNumber(key: key.removingPercentEncoding ?? key) }
            appendPair(key, PercentEncoding.escape(String(double)), to: &output)
        case .bool(let bool):
            let text =
                switch boolEncoding {
                case .numeric: bool ? "1" : "0"
                case .literal: bool ? "true" : "false"
                }
            appendPair(key, text, to: &output)
        }
    }

    private func appendPair(_ key: String, _ value: String, to output: inout String) {
        if !output.isEmpty { output.append("&") }
        output.append(key)
        output.append("=")
        output.append(value)
    }
}

/// Why parameters or a body could not be encoded. Wrapped in ``CourierError/parameterEncoding(_:)``.
public enum ParameterEncodingFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// A `.double` parameter was NaN or infinite, which neither URL nor JSON encoding can write.
    case nonFiniteNumber(key: String)
    /// ``ParameterEncoding/queryString`` was given as the body encoding of
    /// ``HTTPTask/compositeParameters(bodyParameters:bodyEncoding:urlParameters:)-enum.case``.
    case queryStringUsedForBody

    public var description: String {
        switch self {
        case .nonFiniteNumber(let key):
            "parameter '\(key)' is not a finite number"
        case .queryStringUsedForBody:
            "the body encoding of composite parameters cannot be .queryString"
        }
    }
}
