// A status line (a progress bar) that log lines do not land on.
import Foundation

/// Draws one status line that redraws in place (`\r`), and prints log lines above it: the status
/// line is cleared first and drawn again after, so a logger's output never ends up on the bar.
public final class Terminal: Sendable {
    private let shown = Mutexed("")

    public init() {}

    /// Replaces the status line. A shorter line than the last one is padded, so no stale
    /// characters stay at its end.
    public func status(_ text: String) {
        shown.update { shown in
            let padding = String(repeating: " ", count: max(0, shown.count - text.count))
            Self.write("\r" + text + padding, to: .standardOutput)
            shown = text
        }
    }

    /// Prints a line above the status line (on standard error).
    public func log(_ line: String) {
        shown.update { shown in
            if !shown.isEmpty {
                Self.write("\r" + String(repeating: " ", count: shown.count) + "\r", to: .standardOutput)
            }
            Self.write(line + "\n", to: .standardError)
            if !shown.isEmpty { Self.write(shown, to: .standardOutput) }
        }
    }

    /// Clears the status line for good (before a final message).
    public func clearStatus() {
        shown.update { shown in
            if !shown.isEmpty {
                Self.write("\r" + String(repeating: " ", count: shown.count) + "\r", to: .standardOutput)
            }
            shown = ""
        }
    }

    /// Ends the status line where it is, keeping it on screen, and moves to the next line.
    public func finishStatus() {
        shown.update { shown in
            if !shown.isEmpty { Self.write("\n", to: .standardOutput) }
            shown = ""
        }
    }

    private static func write(_ text: String, to handle: FileHandle) {
        handle.write(Data(text.utf8))
    }
}
