// Courier's logger into swift-log: a few lines to copy.
import Courier
import Logging

extension Plugin where Self == NetworkLoggerPlugin {
    /// A ``NetworkLoggerPlugin`` whose lines go to a swift-log `Logger`, one log entry per request
    /// and per response, each line naming the call and its target, with secrets redacted by
    /// `redaction` (the policy replay fixtures use too).
    static func swiftLog(
        _ logger: Logger, level: Logger.Level = .debug,
        options: NetworkLoggerPlugin.Options = [.method, .url, .responseStatus, .retries, .target],
        redaction: RedactionPolicy = .default
    ) -> NetworkLoggerPlugin {
        .logger(options, redaction: redaction, output: { line in logger.log(level: level, "\(line)") })
    }
}
