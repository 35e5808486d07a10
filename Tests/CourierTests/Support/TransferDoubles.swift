import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Wraps a transport and records every transfer it runs (and the body it was given).
final class RecordingTransferTransport: Transport {
    struct Record: Sendable {
        var transfer: Transfer
        /// The body bytes, read from the file while it still existed.
        var body: Data?
    }

    private let inner: any Transport
    private let records = Locked<[Record]>([])

    init(wrapping inner: any Transport) {
        self.inner = inner
    }

    var transfers: [Record] { records.withLock { $0 } }

    func send(_ transfer: Transfer) async throws -> Response {
        var body = transfer.request.httpBody
        if case .file(let url) = transfer.body { body = try? Data(contentsOf: url) }
        records.withLock { $0.append(Record(transfer: transfer, body: body)) }
        return try await inner.send(transfer)
    }
}

/// A transport that reports a scripted sequence of progress before answering.
struct ScriptedProgressTransport: Transport {
    let script: [TransferProgress]
    let statusCode: Int
    let data: Data

    func send(_ transfer: Transfer) async throws -> Response {
        for step in script { transfer.progress?(step) }
        return Response(statusCode: statusCode, data: data, request: transfer.request)
    }
}

/// A fresh folder for one test, removed by `remove()`.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String, contents: Data) throws -> URL {
        let file = url.appendingPathComponent(name)
        try contents.write(to: file)
        return file
    }

    var contents: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

func fileExists(_ url: URL?) -> Bool {
    guard let url else { return false }
    return FileManager.default.fileExists(atPath: url.path)
}
