import FlagRules
import Foundation

/// Lines handed to a sink on a thread of their own, so that a sink that stalls (standard
/// output into a full pipe, a slow log shipper) never holds up the thread that serves: the
/// lines wait in a bounded queue (``maxLines`` lines, ``maxBytes`` bytes); past it they are
/// dropped and counted, and once the sink takes lines again it is first handed a line saying
/// how many were dropped.
package final class LineLog: Sendable {
    package static let maxLines = 10_000
    package static let maxBytes = 8 << 20

    private final class Queue: @unchecked Sendable {
        let condition = NSCondition()
        var lines: [String] = []
        var bytes = 0
        /// Dropped since the sink was last told.
        var untold = 0
        var dropped = 0
        var stopped = false
    }

    private let queue = Queue()

    /// A log handing its lines to `sink`, one after another, on a thread of its own; `notice`
    /// makes the line that says how many lines were dropped.
    package init(sink: @escaping @Sendable (String) -> Void, notice: @escaping @Sendable (Int) -> String) {
        let queue = self.queue
        let thread = Thread {
            while true {
                queue.condition.lock()
                while queue.lines.isEmpty, queue.untold == 0, !queue.stopped { queue.condition.wait() }
                if queue.stopped, queue.lines.isEmpty {
                    queue.condition.unlock()
                    return
                }
                let batch = queue.lines
                let untold = queue.untold
                queue.lines.removeAll(keepingCapacity: true)
                queue.bytes = 0
                queue.untold = 0
                queue.condition.unlock()
                if untold > 0 { sink(notice(untold)) }
                for line in batch { sink(line) }
            }
        }
        thread.name = "flags-serve-log"
        thread.start()
    }

    deinit {
        queue.condition.lock()
        queue.stopped = true
        queue.condition.signal()
        queue.condition.unlock()
    }

    /// Queues `line`; drops it (counted) when the queue is full. Never waits for the sink.
    package func append(_ line: String) {
        queue.condition.lock()
        defer { queue.condition.unlock() }
        guard queue.lines.count < LineLog.maxLines, queue.bytes + line.utf8.count <= LineLog.maxBytes else {
            queue.untold += 1
            queue.dropped += 1
            return
        }
        queue.lines.append(line)
        queue.bytes += line.utf8.count
        queue.condition.signal()
    }

    /// The lines dropped so far.
    package var dropped: Int {
        queue.condition.lock()
        defer { queue.condition.unlock() }
        return queue.dropped
    }
}
