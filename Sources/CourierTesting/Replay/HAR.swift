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

        init(request: Request, response: Response) {
            self.request = request
            self.response = response
        }

        /// Lenient: a HAR file from a browser or a proxy (fractional times, more timings, page
        /// references) replays too; only the request and the response are read.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            request = try container.decode(Request.self, forKey: .request)
            response = try container.decode(Response.self, forKey: .response)
        }
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

        init(
            method: String, url: String, headers: [NameValue], queryString: [NameValue], postData: PostData?,
            bodySize: Int
        ) {
            self.method = method
            self.url = url
            self.headers = headers
            self.queryString = queryString
            self.postData = postData
            self.bodySize = bodySize
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            method = try container.decode(String.self, forKey: .method)
            url = try container.decode(String.self, forKey: .url)
            headers = try container.decodeIfPresent([NameValue].self, forKey: .headers) ?? []
            queryString = try container.decodeIfPresent([NameValue].self, forKey: .queryString) ?? []
            postData = try container.decodeIfPresent(PostData.self, forKey: .postData)
            bodySize = (try? container.decodeIfPresent(Int.self, forKey: .bodySize)) ?? -1
        }
    }

    struct PostData: Codable, Sendable {
        var mimeType: String
        /// Absent in other tools' HAR files for a form given as `params`.
        var text: String?
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
        /// `true` for a stream whose reader stopped reading while it was recorded: `content` is
        /// what had arrived by then, not the whole answer.
        var cutShort: Bool?

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize
            case chunks = "_chunks"
            case error = "_error"
            case cutShort = "_cutShort"
        }

        init(
            status: Int, statusText: String, headers: [NameValue], content: Content, bodySize: Int, chunks: [Int]?,
            error: Failure?, cutShort: Bool? = nil
        ) {
            self.status = status
            self.statusText = statusText
            self.headers = headers
            self.content = content
            self.bodySize = bodySize
            self.chunks = chunks
            self.error = error
            self.cutShort = cutShort
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = try container.decode(Int.self, forKey: .status)
            statusText = try container.decodeIfPresent(String.self, forKey: .statusText) ?? ""
            httpVersion = try container.decodeIfPresent(String.self, forKey: .httpVersion) ?? "HTTP/1.1"
            headers = try container.decodeIfPresent([NameValue].self, forKey: .headers) ?? []
            content =
                try container.decodeIfPresent(Content.self, forKey: .content)
                ?? Content(size: 0, mimeType: "", text: nil, encoding: nil)
            bodySize = (try? container.decodeIfPresent(Int.self, forKey: .bodySize)) ?? -1
            chunks = try container.decodeIfPresent([Int].self, forKey: .chunks)
            error = try container.decodeIfPresent(Failure.self, forKey: .error)
            cutShort = try container.decodeIfPresent(Bool.self, forKey: .cutShort)
        }
    }

    struct Content: Codable, Sendable {
        var size: Int
        var mimeType: String
        var text: String?
        var encoding: String?

        init(size: Int, mimeType: String, text: String?, encoding: String?) {
            self.size = size
            self.mimeType = mimeType
            self.text = text
            self.encoding = encoding
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            size = (try? container.decodeIfPresent(Int.self, forKey: .size)) ?? 0
            mimeType = try container.decodeIfPresent(String.self, forKey: .mimeType) ?? ""
            text = try container.decodeIfPresent(String.self, forKey: .text)
            encoding = try container.decodeIfPresent(String.self, forKey: .encoding)
        }
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
