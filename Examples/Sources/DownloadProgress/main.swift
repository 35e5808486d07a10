// swift run --package-path Examples Download                 # a simulated 8 MB download, offline
// swift run --package-path Examples Download --url URL       # a real one, saved to the current folder
// …add --verbose to log the requests (above the bar). Ctrl-C cancels: nothing is left behind.
import Courier
import ExampleSupport
import Foundation

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
if arguments.contains("--url"), real == nil {
    FileHandle.standardError.write(Data("usage: Download [--url URL] [--verbose]\n".utf8))
    exit(2)
}
let terminal = Terminal()
// Offline, the file goes to a temporary folder and is not kept: it is made up.
let folder =
    real == nil
    ? FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-example-\(UUID().uuidString)")
    : URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
let provider = Provider<File>(
    transport: real == nil ? SimulatedTransport() : URLSessionTransport(),
    plugins: arguments.contains("--verbose") ? [.logger(output: { terminal.log($0) })] : [])
let target = File(url: real ?? URL(string: "https://downloads.example.com/simulated.bin")!, folder: folder)
if real == nil {
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    terminal.log("offline: a simulated download, nothing is kept (--url URL downloads for real)")
}

let status = await exitStatus(cancellingOnInterrupt: {
    do {
        for try await event in provider.requestWithProgress(target) {
            terminal.status(bar(event))
            guard let response = event.response else { continue }
            terminal.finishStatus()
            if real == nil {
                // The simulation's own folder (made above), with the made-up file in it.
                try? FileManager.default.removeItem(at: folder)
                print("simulated download complete: \(event.download?.completed ?? 0) bytes")
            } else {
                print("saved to \(response.fileURL?.path ?? "?")")
            }
        }
        return 0
    } catch {
        // The bar of a refused or interrupted download does not stay on screen.
        terminal.clearStatus()
        // Only the folder this example made for its simulation; never the caller's.
        if real == nil { try? FileManager.default.removeItem(at: folder) }
        FileHandle.standardError.write(
            Data(
                "download \((error as? CourierError)?.isCancellation == true ? "cancelled" : "failed: \(error.localizedDescription)")\n"
                    .utf8))
        return 1
    }
})
exit(status)
