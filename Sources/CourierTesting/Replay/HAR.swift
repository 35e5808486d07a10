import Foundation

/// The fixture format: HAR 1.2 (HTTP Archive), which browsers' developer tools, proxies and HAR
/// viewers read. Courier writes only what it replays, with fixed times, sorted keys and sorted
/// headers, so a fixture recorded twice from the same answers is the same file. Courier's own
/// additions start with `_`, as the format allows.
enum HAR {
    struct File: Codable, Sendable {
        var log: Log
    }

    struct Log: Codable, Sendable {
        var version = "1.2"
        var creator = Creator()
        var entries: [Entry]
    }

    struct Creator: Codable, Sendable {
        var name = "CourierTesting"
        var version = "1"
    }

    struct NameValue: Codable, Sendable, Equatable {
        var name: String
        var value: String
    }

    struct Entry: Codable, Sendable {
        /// Fixed: a fixture does not change because it was recorded at another time.
        var startedDateTime = "1970-01-01T00:00:00.000Z"
        var time = 0
        var request: Request
        var response: Response
        var cache: [String: String] = [:]
        var timings = Timings()
    }

    struct Request: Codable, Sendable {
        var method: String
        var url: String
        var httpVersion = "HTTP/1.1"
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var queryString: [NameValue]
        var postData: PostData?
        var headersSize = -1
        var bodySize: Int
    }

    struct PostData: Codable, Sendable {
        var mimeType: String
        var text: String
        /// `base64` for a body that is not UTF-8 text (HAR has no field for it in `postData`).
        var encoding: String?

        enum CodingKeys: String, CodingKey {
            case mimeType, text
            case encoding = "_encoding"
        }
    }

    struct Response: Codable, Sendable {
        var status: Int
        var statusText: String
        var httpVersion = "HTTP/1.1"
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var content: Content
        var redirectURL = ""
        var headersSize = -1
        var bodySize: Int
        /// Chunk sizes, for a response that was streamed: replayed in the same pieces.
        var chunks: [Int]?
        /// The transport's error, for an exchange that failed (status 0, as browsers write it),
        /// or that failed after the body in `content` arrived.
        var error: Failure?

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize
            case chunks = "_chunks"
            case error = "_error"
        }
    }

    struct Content: Codable, Sendable {
        var size: Int
        var mimeType: String
        var text: String?
        var encoding: String?
    }

    struct Failure: Codable, Sendable {
        var domain: String
        var code: Int
        var description: String
    }

    struct Timings: Codable, Sendable {
        var send = 0
        var wait = 0
        var receive = 0
    }

    /// A body as HAR text: UTF-8 when it is (and reads back to the same bytes), Base64 otherwise.
    static func text(_ data: Data) -> (text: String, encoding: String?) {
        if let text = String(data: data, encoding: .utf8), Data(text.utf8) == data { return (text, nil) }
        return (data.base64EncodedString(), "base64")
    }

    /// The bytes of a HAR body.
    static func data(_ text: String?, encoding: String?) -> Data? {
        guard let text else { return Data() }
        if encoding == "base64" { return Data(base64Encoded: text) }
        return Data(text.utf8)
    }
}
