// swift run --package-path Examples events                 # a simulated event stream, offline
// swift run --package-path Examples events --url URL       # any text/event-stream endpoint
//
// Prints Server-Sent Events as they arrive. Offline, the target's sample response streams a
// made-up completion one token at a time; with --url, the events come from the server. Ctrl-C
// cancels: the connection is closed and the process exits with 130.
import Courier
import ExampleSupport
import Foundation

struct Completion: TargetType {
    var url: URL?
    var baseURL: URL { url ?? URL(string: "https://api.example.com")! }
    var path: String { url == nil ? "v1/completions" : "" }
    var headers: [String: String] { ["Accept": "text/event-stream"] }
    var validation: ValidationType { .successCodes }

    /// Offline: tokens 150 ms apart, then the `[DONE]` sentinel such APIs end with.
    var sampleResponse: SampleResponse {
        let tokens = ["Streams", " arrive", " while", " they", " are", " written", "."]
        let events =
            tokens.enumerated().map { index, token in
                ServerSentEvent(id: "\(index)", event: "token", data: #"{"text":"\#(token)"}"#)
            } + [ServerSentEvent(data: "[DONE]")]
        return .events(events, interval: .milliseconds(150))
    }
}

struct Token: Decodable {
    let text: String
}

/// Writes to standard output at once (`print` buffers when the output is a pipe).
func write(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

let arguments = CommandLine.arguments
let url = arguments.firstIndex(of: "--url").flatMap {
    arguments.indices.contains($0 + 1) ? URL(string: arguments[$0 + 1]) : nil
}
if arguments.contains("--url"), url == nil {
    FileHandle.standardError.write(Data("usage: events [--url URL]\n".utf8))
    exit(2)
}

let provider = Provider<Completion>(stubClosure: url == nil ? Provider.immediatelyStub : Provider.neverStub)
if url == nil { write("(offline: a stubbed event stream; pass --url URL for a real one)\n") }
let status = await exitStatus(cancellingOnInterrupt: {
    do {
        let stream = try await provider.stream(Completion(url: url), idleTimeout: .seconds(30))
        write("HTTP \(stream.statusCode), \(stream.response?.value(forHTTPHeaderField: "Content-Type") ?? "no type")\n")
        var count = 0
        for try await event in stream.events {
            if event.data == "[DONE]" { break }
            count += 1
            // Each token shows as it arrives.
            let text =
                if event.event == "token", let token = try? event.decode(Token.self) { token.text } else {
                    "[\(event.event)] \(event.data)\n"
                }
            write(text)
        }
        write("\n\(count) events\n")
        return 0
    } catch {
        let cancelled = (error as? CourierError)?.isCancellation == true
        FileHandle.standardError.write(Data((cancelled ? "\ncancelled\n" : "failed: \(error)\n").utf8))
        return 1
    }
})
exit(status)
