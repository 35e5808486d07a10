// swift run --package-path Examples Download                 # a simulated 8 MB download, offline
// swift run --package-path Examples Download --url URL       # a real one, saved to the current folder
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct File: TargetType {
    var headers: [String: String] { [:] }
    var url: URL
    var folder: URL
    var baseURL: URL { url }
    var path: String { "" }
    var task: HTTPTask { .download(.suggestedFileName(in: folder, options: [.removePreviousFile])) }
    var validation: ValidationType { .successCodes }
}

/// Pretends to download `size` bytes in steps, reporting progress as a real transport does.
struct SimulatedTransport: Transport {
    var size = 8_000_000
    func send(_ request: URLRequest) async throws -> Response {
        try await send(Transfer(request: request))
    }
    func send(_ transfer: Transfer) async throws -> Response {
        transfer.progress?(.responseStarted(expectedLength: Int64(size)))
        for step in 1...40 {
            try await Task.sleep(for: .milliseconds(25))
            transfer.progress?(.received(bytes: Int64(size * step / 40)))
        }
        if case .file(let url) = transfer.destination { try Data(count: size).write(to: url) }
        let http = HTTPURLResponse(
            url: transfer.request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Disposition": "attachment; filename=\"simulated.bin\""])
        return Response(
            statusCode: 200, data: Data(), request: transfer.request, response: http, fileURL: transfer.destination.url)
    }
}

extension Transfer.Destination {
    var url: URL? {
        if case .file(let url) = self { return url }
        return nil
    }
}

func bar(_ event: ProgressEvent) -> String {
    let width = 30
    guard let fraction = event.fraction else {
        return "[\(String(repeating: "·", count: width))] \(event.download?.completed ?? 0) bytes"
    }
    let filled = Int(fraction * Double(width))
    let percent = Int(fraction * 100)
    return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] \(percent)%"
}

let arguments = CommandLine.arguments
let real = arguments.firstIndex(of: "--url").flatMap {
    arguments.indices.contains($0 + 1) ? URL(string: arguments[$0 + 1]) : nil
}
let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
let provider = Provider<File>(transport: real == nil ? SimulatedTransport() : URLSessionTransport())
let target = File(url: real ?? URL(string: "https://downloads.example.com/simulated.bin")!, folder: folder)

do {
    for try await event in provider.requestWithProgress(target) {
        // Unbuffered, so the bar moves as events arrive.
        FileHandle.standardOutput.write(Data(("\r" + bar(event)).utf8))
        if let response = event.response {
            print("\nsaved to \(response.fileURL?.path ?? "?")")
            if real == nil, let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
        }
    }
} catch {
    print("\ndownload failed: \(error.localizedDescription)")
    exit(1)
}
