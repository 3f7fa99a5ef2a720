import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The controlling terminal in full-screen mode: raw input (no echo, no line buffering, no signals from keys), the
/// alternate screen, a hidden cursor. Restores everything on ``restore()``, which the app calls on every way out.
final class Terminal: @unchecked Sendable {
    private var original = termios()
    private var isRaw = false
    private let lock = NSLock()

    /// Switches the terminal to raw mode and the alternate screen.
    func enterFullScreen() throws {
        try lock.withLock {
            guard isatty(STDIN_FILENO) == 1 else { throw TodoError.notATerminal }
            guard tcgetattr(STDIN_FILENO, &original) == 0 else { throw TodoError.notATerminal }
            var raw = original
            raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
            raw.c_oflag &= ~tcflag_t(OPOST)
            raw.c_cflag |= tcflag_t(CS8)
            raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
            withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
                bytes[Int(VMIN)] = 1
                bytes[Int(VTIME)] = 0
            }
            guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { throw TodoError.notATerminal }
            isRaw = true
        }
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
    }

    /// Leaves the alternate screen and gives the terminal its settings back.
    func restore() {
        lock.withLock {
            guard isRaw else { return }
            isRaw = false
            Self.writeOut("\u{1B}[?25h\u{1B}[?1049l")
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
        }
    }

    /// Rows and columns (80×24 when the size is unknown).
    var size: (rows: Int, columns: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 else {
            return (24, 80)
        }
        return (Int(size.ws_row), Int(size.ws_col))
    }

    /// Draws `lines` over the whole screen (each cleared to its end, the rest of the screen cleared).
    func draw(_ lines: [String]) {
        var frame = "\u{1B}[H"
        for (index, line) in lines.enumerated() {
            frame += line + "\u{1B}[K"
            if index < lines.count - 1 { frame += "\r\n" }
        }
        frame += "\u{1B}[J"
        write(frame)
    }

    func write(_ text: String) { Self.writeOut(text) }

    private static func writeOut(_ text: String) { writeToStandardOutput(text) }
}

/// Writes all of `text` to standard output at once, unbuffered (a pipe or a terminal sees it now).
func writeToStandardOutput(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if written <= 0 { return }
        bytes = bytes.dropFirst(written)
    }
}
