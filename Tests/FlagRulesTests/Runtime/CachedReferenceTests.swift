import Foundation
import Testing

@testable import FlagRules

@Suite struct CachedReferenceTests {
    final class Box: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test func aReplacementIsSeenByTheNextRead() {
        let reference = CachedReference(Box(1))
        #expect(reference.withCurrent { $0.value } == 1)
        #expect(reference.withCurrent { $0.value } == 1)  // from this thread's copy
        reference.replace { Box($0.value + 1) }
        #expect(reference.withCurrent { $0.value } == 2)
        #expect(reference.current.value == 2)
    }

    @Test func moreReferencesThanSlotsStayCorrect() {
        let references = (0..<(ThreadCache.capacity * 3)).map { CachedReference(Box($0)) }
        for _ in 0..<3 {
            for (i, r) in references.enumerated() { #expect(r.withCurrent { $0.value } == i) }
        }
        references[5].replace { _ in Box(50) }
        #expect(references[5].withCurrent { $0.value } == 50)
    }

    @Test func aThreadsCopyIsReleasedWhenItReadsAgain() {
        let reference = CachedReference(Box(1))
        weak var old: Box?
        do {
            let first = Box(7)
            old = first
            reference.replace { _ in first }
            #expect(reference.withCurrent { $0.value } == 7)
        }
        reference.replace { _ in Box(8) }
        #expect(old != nil)  // still this thread's copy
        #expect(reference.withCurrent { $0.value } == 8)
        #expect(old == nil)  // replaced by the new copy, and freed
    }

    @Test func threadsNeverSeeAGenerationGoBack() async {
        let reference = CachedReference(Box(0))
        let problems = await withTaskGroup(of: Int.self) { group in
            group.addTask {
                for i in 1...2_000 { reference.replace { _ in Box(i) } }
                return 0
            }
            for _ in 0..<3 {
                group.addTask {
                    var last = 0
                    var wrong = 0
                    while last < 2_000 {
                        let now = reference.withCurrent { $0.value }
                        if now < last { wrong += 1 }
                        last = now
                        await Task.yield()
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(problems == 0)
    }
}
