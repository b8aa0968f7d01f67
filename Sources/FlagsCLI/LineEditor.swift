/// A key as the line editor sees it.
enum Key: Equatable {
    case text(String)
    case enter, backspace, delete, left, right, up, down, home, end, tab
    /// Ctrl-C: cancel the line.
    case interrupt
    /// Ctrl-D: quit on an empty line, else delete under the cursor.
    case endOfInput
    /// Ctrl-U, Ctrl-K, Ctrl-W, Ctrl-L.
    case killToStart, killToEnd, deleteWord, clearScreen
}

/// Turns terminal bytes (UTF-8 text, control characters, ANSI escape sequences) into keys.
struct KeyDecoder {
    private var pending: [UInt8] = []

    /// Feeds one byte; returns a key once one is complete.
    mutating func feed(_ byte: UInt8) -> Key? {
        pending.append(byte)
        let first = pending[0]
        if first == 0x1B {
            if pending.count == 1 { return nil }
            if pending[1] != UInt8(ascii: "[") && pending[1] != UInt8(ascii: "O") {
                pending.removeAll()
                return nil
            }
            if pending.count == 2 { return nil }
            let last = pending[pending.count - 1]
            guard (0x40...0x7E).contains(last) else {
                if pending.count > 8 { pending.removeAll() }
                return nil
            }
            defer { pending.removeAll() }
            switch (last, pending.count) {
            case (UInt8(ascii: "A"), _): return .up
            case (UInt8(ascii: "B"), _): return .down
            case (UInt8(ascii: "C"), _): return .right
            case (UInt8(ascii: "D"), _): return .left
            case (UInt8(ascii: "H"), _): return .home
            case (UInt8(ascii: "F"), _): return .end
            case (UInt8(ascii: "~"), _):
                switch pending[2] {
                case UInt8(ascii: "3"): return .delete
                case UInt8(ascii: "1"), UInt8(ascii: "7"): return .home
                case UInt8(ascii: "4"), UInt8(ascii: "8"): return .end
                default: return nil
                }
            default: return nil
            }
        }
        if first < 0x80 {
            pending.removeAll()
            switch first {
            case 0x0D, 0x0A: return .enter
            case 0x7F, 0x08: return .backspace
            case 0x09: return .tab
            case 0x03: return .interrupt
            case 0x04: return .endOfInput
            case 0x01: return .home
            case 0x05: return .end
            case 0x02: return .left
            case 0x06: return .right
            case 0x10: return .up
            case 0x0E: return .down
            case 0x15: return .killToStart
            case 0x0B: return .killToEnd
            case 0x17: return .deleteWord
            case 0x0C: return .clearScreen
            case 0x20...0x7E: return .text(String(UnicodeScalar(first)))
            default: return nil
            }
        }
        let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
        if pending.count < length { return nil }
        defer { pending.removeAll() }
        guard let text = String(validating: pending, as: UTF8.self) else { return nil }
        return .text(text)
    }
}

/// The state of one line being edited: text, cursor and history. Pure: the terminal shell
/// feeds it keys and draws what it says.
struct LineEditor {
    enum Event: Equatable {
        case none
        case submit(String)
        case cancel
        case quit
        case complete
        case clearScreen
    }

    private(set) var buffer: [Character] = []
    private(set) var cursor = 0
    private(set) var history: [String] = []
    private var historyIndex: Int?
    private var draft: [Character] = []

    var line: String { String(buffer) }

    /// The text before the cursor (what completion looks at).
    var textBeforeCursor: String { String(buffer[..<cursor]) }

    /// An editor whose history starts with `history` (from earlier sessions).
    init(history: [String] = []) { self.history = history }

    mutating func handle(_ key: Key) -> Event {
        switch key {
        case .text(let s):
            buffer.insert(contentsOf: s, at: cursor)
            cursor += s.count
        case .enter:
            let text = line
            if !text.trimmingCharacters(in: .whitespaces).isEmpty, history.last != text { history.append(text) }
            reset()
            return .submit(text)
        case .backspace:
            if cursor > 0 {
                buffer.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete:
            if cursor < buffer.count { buffer.remove(at: cursor) }
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(buffer.count, cursor + 1)
        case .home: cursor = 0
        case .end: cursor = buffer.count
        case .up:
            guard !history.isEmpty else { break }
            if historyIndex == nil { draft = buffer }
            let index = max(0, (historyIndex ?? history.count) - 1)
            historyIndex = index
            buffer = Array(history[index])
            cursor = buffer.count
        case .down:
            guard let index = historyIndex else { break }
            if index + 1 < history.count {
                historyIndex = index + 1
                buffer = Array(history[index + 1])
            } else {
                historyIndex = nil
                buffer = draft
            }
            cursor = buffer.count
        case .tab:
            return .complete
        case .interrupt:
            reset()
            return .cancel
        case .endOfInput:
            if buffer.isEmpty { return .quit }
            if cursor < buffer.count { buffer.remove(at: cursor) }
        case .killToStart:
            buffer.removeFirst(cursor)
            cursor = 0
        case .killToEnd:
            buffer.removeLast(buffer.count - cursor)
        case .deleteWord:
            var start = cursor
            while start > 0, buffer[start - 1] == " " { start -= 1 }
            while start > 0, buffer[start - 1] != " " { start -= 1 }
            buffer.removeSubrange(start..<cursor)
            cursor = start
        case .clearScreen:
            return .clearScreen
        }
        return .none
    }

    private mutating func reset() {
        buffer = []
        cursor = 0
        historyIndex = nil
        draft = []
    }

    /// The word before the cursor: identifier characters and the dots of a path
    /// (`org.pl`), with a leading ':' for commands.
    var wordBeforeCursor: String {
        var start = cursor
        while start > 0, buffer[start - 1].isLetter || buffer[start - 1].isNumber || buffer[start - 1] == "_" || buffer[start - 1] == "." {
            start -= 1
        }
        if start > 0, buffer[start - 1] == ":", start == 1 { start -= 1 }
        return String(buffer[start..<cursor])
    }

    /// Completes the word before the cursor from `candidates`: the only match, or the
    /// longest common prefix of several. Returns the matches to show when the word cannot
    /// grow (empty when there is nothing to show).
    mutating func complete(from candidates: [String]) -> [String] {
        let word = wordBeforeCursor
        let matches = candidates.filter { $0.hasPrefix(word) && $0 != word }.sorted()
        guard !matches.isEmpty else { return [] }
        if matches.count == 1 {
            var addition = String(matches[0].dropFirst(word.count))
            if matches[0].hasPrefix(":") { addition += " " }
            buffer.insert(contentsOf: addition, at: cursor)
            cursor += addition.count
            return []
        }
        var prefix = matches[0]
        for m in matches.dropFirst() {
            while !m.hasPrefix(prefix) { prefix.removeLast() }
        }
        if prefix.count > word.count {
            let addition = String(prefix.dropFirst(word.count))
            buffer.insert(contentsOf: addition, at: cursor)
            cursor += addition.count
            return []
        }
        return matches
    }
}
