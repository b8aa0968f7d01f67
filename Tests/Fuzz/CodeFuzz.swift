// libFuzzer target: the code scanner of `flags refs` and `flags stale`, and the event-stream
// reader of a subscribed store. Any bytes are scanned as Swift, Python and JavaScript;
// every reference must lie within the input, name a declared name or be a flag read, and
// be found again when the input is scanned twice over (the scanner keeps no state between
// files). The same bytes read as an event stream give the same events whole and cut in
// two at every third byte. Read as `flags serve`'s metrics (what `flags stale --metrics`
// takes), they give served values or a failure naming a line of the input, and a sample
// written back in the format reads as what it was.
import Foundation

/// One input, 0 when it is done with it (a finding traps); called by `FuzzMain.swift`.
func codeFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let names: Set<String> = ["darkMode", "checkout", "a", "flag1"]
    // Lines as the scanner counts them: by newline bytes (a "\r\n" is one Character).
    let lines = text.utf8.split(separator: 10, omittingEmptySubsequences: false)
    for file in ["fuzz.swift", "fuzz.py", "fuzz.js"] {
        let found = CodeScanner.scan(text, file: file, names: names)
        for r in found {
            precondition(r.line >= 1 && r.line <= lines.count, "\(file): line \(r.line) of \(lines.count)")
            // A column counts characters, at most the line's bytes.
            precondition(r.column >= 1 && r.column <= lines[r.line - 1].count + 1, "\(file): column \(r.column) on line \(r.line)")
            precondition(names.contains(r.name) || r.isFlagRead, "\(file): '\(r.name)' is neither declared nor read")
        }
        let again = CodeScanner.scan(text, file: file, names: names)
        precondition(again == found, "\(file): a second scan differs")
    }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var whole = ServerSentEvents()
    let wholeEvents = try? whole.feed(bytes)
    var cut = ServerSentEvents()
    var cutEvents: [ServerSentEvents.Event]? = []
    for start in stride(from: 0, to: bytes.count, by: 3) {
        guard let events = try? cut.feed(bytes[start..<min(bytes.count, start + 3)]) else {
            cutEvents = nil
            break
        }
        cutEvents? += events
    }
    precondition(wholeEvents == cutEvents, "the event stream reads differently in pieces")
    do {
        _ = try ServedValues(metrics: text)
    } catch {
        let line = error.message.hasPrefix("line ") ? Int(error.message.dropFirst(5).prefix { $0.isNumber }) : nil
        precondition(line.map { $0 >= 1 && $0 <= lines.count } ?? error.message.hasPrefix("no flags_"), "metrics: \(error.message)")
    }
    let escaped = ServedValues.escape(text)
    let sample = "flags_counting_since_timestamp_seconds 0\nflags_value_last_served_timestamp_seconds{flag=\"\(escaped)\",value=\"1\"} 5\n"
    let read = try? ServedValues(metrics: sample)
    precondition(read?.lastServed[text]?["1"] == Date(timeIntervalSince1970: 5), "metrics: a label did not read back")
    return 0
}
