import Testing

@testable import FlagRules

@Suite struct PreparedContextTests {
    let rules: RuleSet

    init() throws {
        rules = try RuleSet(source: specExample, name: "spec.flags")
    }

    @Test func everyDeclarationAgreesWithDictionaryContexts() {
        let contexts: [EvaluationContext] = [
            [:],
            ["build": "alpha", "userId": "42", "country": "US", "appVersion": "2.4.0"],
            ["build": "release", "userId": "user-3", "country": "US", "appVersion": "2.2.0", "email": "a@example.com", "age": 70],
            ["build": "prod", "userId": 5, "country": "FR", "appVersion": "x", "age": 70.5, "now": "2030-01-01"],
        ]
        for context in contexts {
            let prepared = rules.prepare(context)
            for d in rules.declarations {
                #expect(rules.evaluate(d.name, in: prepared) == rules.evaluate(d.name, in: context), "\(d.name) in \(context)")
                #expect(rules.evaluate(rules.handle(d.name), in: prepared) == rules.evaluate(d.name, in: context))
            }
        }
    }

    /// `variant(_:in:)` by handle answers without building a resolution: the same name as
    /// the resolution's value, for every declaration (a flag or value answers the default),
    /// in lenient and strict mode, under overrides, for a handle naming nothing.
    @Test func variantsByHandleAgreeWithTheirResolutions() {
        var g = SeededGenerator(seed: 29)
        var strict = rules
        strict.checksContextsStrictly = true
        let names = rules.declarations.map(\.name) + ["missing"]
        func check(_ note: String) {
            for _ in 0..<60 {
                var context = OneContextOneAnswerTests.randomContext(&g)
                context["build"] = ["alpha", "beta", "release", 3][Int(g.next() % 4)]
                context["userId"] = ["u-1", "u-22", "user-333", 4][Int(g.next() % 4)]
                for rules in [rules, strict] {
                    let prepared = rules.prepare(context)
                    for name in names {
                        let handle = rules.handle(name)
                        let resolved = rules.evaluate(handle, in: prepared, expecting: .variant, default: .string("fallback"))
                        #expect(
                            rules.variant(handle, in: prepared, default: "fallback") == (resolved.value.stringValue ?? "fallback"),
                            "\(name) in \(context), \(note)")
                    }
                }
            }
        }
        check("no overrides")
        withFlagOverrides(["checkout": "twoStep"]) { check("checkout overridden") }
    }

    @Test func valuesAreCheckedOnceAndReadBack() {
        var c = rules.makeContext()
        c["appVersion"] = "2.4.0"
        c["age"] = 30.5  // mistyped: present, but reads as absent
        c["undeclared"] = "ignored"
        c["now"] = "2026-01-01"
        #expect(c["appVersion"] == "2.4.0")
        #expect(c["age"] == .double(30.5))
        #expect(c["undeclared"] == nil)
        #expect(c.dictionary == ["appVersion": "2.4.0", "age": .double(30.5), "now": "2026-01-01"])
        c["appVersion"] = nil
        #expect(c["appVersion"] == nil)
        #expect(rules.evaluate("newMediaPicker", in: c) == Resolution(value: true, reason: .default))
    }

    /// A slot keeps only the typed value; a value given in another form (converted or
    /// mistyped) is kept aside, read back as given, and dropped when the slot is set again.
    @Test func valuesGivenInAnotherFormAreKeptAside() throws {
        let r = try RuleSet(
            source: """
                context {
                  appVersion : version
                  age        : int
                }
                flag recent { enabled when appVersion >= "2.0.0" }
                flag hasAge { enabled when has(age) }
                flag adult { enabled when age >= 18 }
                """)
        #expect(MemoryLayout<PreparedSlot>.stride == 24)
        var c = r.makeContext()
        c["appVersion"] = "2.4.0"  // converted: the slot holds a version
        c["age"] = "thirty"  // mistyped
        #expect(c["appVersion"] == "2.4.0")
        #expect(c["age"] == "thirty")
        #expect(r.isEnabled(r.handle("recent"), in: c))
        #expect(r.isEnabled(r.handle("hasAge"), in: c))
        #expect(!r.isEnabled(r.handle("adult"), in: c))

        var copy = c  // copy on write: the values kept aside are the copy's own
        copy["age"] = 30
        copy["appVersion"] = .version(SemanticVersion("1.0.0")!)
        #expect(copy["age"] == 30)
        #expect(copy["appVersion"] == .version(SemanticVersion("1.0.0")!))
        #expect(r.isEnabled(r.handle("adult"), in: copy))
        #expect(!r.isEnabled(r.handle("recent"), in: copy))
        #expect(c["age"] == "thirty")
        #expect(c["appVersion"] == "2.4.0")

        copy["age"] = nil
        #expect(copy["age"] == nil)
        #expect(!r.isEnabled(r.handle("hasAge"), in: copy))
        #expect(copy.dictionary == ["appVersion": .version(SemanticVersion("1.0.0")!)])
        #expect(c.dictionary == ["appVersion": "2.4.0", "age": "thirty"])
    }

    @Test func handlesFromAnotherRuleSetAreResolvedByName() throws {
        let other = try RuleSet(source: "flag zzz = true\nflag darkMode = true")
        let foreign = other.handle("darkMode")
        let missing = other.handle("zzz")
        let context = rules.prepare(["build": "alpha", "userId": "42"])
        #expect(rules.isEnabled(foreign, in: context))
        #expect(rules.evaluate(missing, in: context).errorCode == .flagNotFound)
        #expect(!rules.isEnabled(missing, in: context))
        // A prepared context from another rule set is read by name.
        let otherContext = other.prepare(["build": "alpha", "userId": "42"])
        #expect(rules.isEnabled(rules.handle("darkMode"), in: otherContext))
        #expect(rules.evaluate(rules.handle("nope"), in: context).errorCode == .flagNotFound)
        #expect(!rules.isEnabled(rules.handle("checkout"), in: context))  // not a flag
    }

    /// The extras (`now`, or every attribute without a schema) live in the same
    /// copy-on-write storage as the slots: a copy set afterwards keeps its own.
    @Test func copiesKeepTheirOwnExtras() throws {
        let r = try RuleSet(source: "flag f { enabled when anything == 1 }")
        let f = r.handle("f")
        var a = r.makeContext()
        a["anything"] = 1
        var b = a
        b["anything"] = 2
        #expect(r.isEnabled(f, in: a) && !r.isEnabled(f, in: b))
        #expect(a.dictionary == ["anything": 1] && b.dictionary == ["anything": 2])

        var c = rules.makeContext()
        c["now"] = "2026-01-01"
        c["build"] = "alpha"
        var d = c
        d["now"] = "2030-01-01"
        #expect(c.dictionary == ["now": "2026-01-01", "build": "alpha"])
        #expect(d.dictionary == ["now": "2030-01-01", "build": "alpha"])
    }

    @Test func schemalessRuleSetsKeepEveryAttribute() throws {
        let r = try RuleSet(source: "flag f { enabled when anything == 1 and has(other) }")
        var c = r.makeContext()
        c["anything"] = 1
        c["other"] = "x"
        #expect(r.isEnabled(r.handle("f"), in: c))
    }

    /// A batch over a large list of long keys (UUID-like) answers as one call a context and as by name, for members,
    /// non-members of the same length and of other lengths, absent and mistyped values, and
    /// contexts prepared by another rule set, in batches of every length.
    @Test func batchesOfLongKeysAgreeWithOneCallAContext() throws {
        func key(_ i: Int) -> String { "0000-\(String(100_000_000 + i))-aaaa-bbbb-cccc-\(i % 7)" }
        let members = (0..<20_000).map(key)
        let rules = try RuleSet(
            source: """
                context { userId: string; age: int }
                flag ids { enabled when userId in [\(members.map { "\"\($0)\"" }.joined(separator: ", "))] }
                """)
        let handle = rules.handle("ids")
        var contexts: [EvaluationContext] = [[:], ["userId": 5], ["userId": "short"], ["userId": .string(key(3) + "x")]]
        for k in 0..<400 {
            let i = (k &* 7_919) % 40_000  // half members, half the same shape but not members
            contexts.append([
                "userId": .string(i < 20_000 ? key(i) : key(i).replacingOccurrences(of: "aaaa", with: "aaab")), "age": .int(k),
            ])
        }
        let other = try RuleSet(source: "context { userId: string }\nflag x = true")
        let prepared = contexts.enumerated().map { $0 % 9 == 8 ? other.prepare($1) : rules.prepare($1) }
        let oneByOne = prepared.map { rules.isEnabled(handle, in: $0) }
        #expect(oneByOne.contains(true) && oneByOne.contains(false))
        #expect(oneByOne == contexts.map { rules.isEnabled("ids", in: $0) })
        for count in [0, 1, 3, 4, 5, 9, prepared.count] {
            #expect(rules.isEnabled(handle, in: Array(prepared.prefix(count))) == Array(oneByOne.prefix(count)), "\(count)")
        }
    }

    /// Many large lists (35) over one attribute, and one over another: `in` and `not in` on a prepared context answer as by name and as the
    /// lists say, for members of some lists and of none, values set again, copies,
    /// mistyped and absent values, and contexts prepared elsewhere.
    @Test func largeListsOnAPreparedContextAnswerAsByName() throws {
        let lists = 35
        func list(_ k: Int) -> Range<Int> { k * 100..<(k * 100 + 1_024) }
        func literal(_ range: Range<Int>) -> String { "[" + range.map { "\"m\($0)\"" }.joined(separator: ", ") + "]" }
        // Every third list is `not in`.
        func negated(_ k: Int) -> Bool { k % 3 == 0 }
        var source = "context { country: string; plan: string }\n"
        for k in 0..<lists { source += "flag l\(k) { enabled when country \(negated(k) ? "not in" : "in") \(literal(list(k))) }\n" }
        source += "flag few { enabled when country in [\"m1\", \"m2\"] }\n"
        source += "flag planned { enabled when plan in \(literal(list(2))) }\n"
        let rules = try RuleSet(source: source)
        let flags = (0..<lists).map { "l\($0)" } + ["few", "planned"]
        let handles = flags.map { rules.handle($0) }
        func agrees(_ c: PreparedContext, _ note: String) {
            for (name, handle) in zip(flags, handles) {
                #expect(rules.isEnabled(handle, in: c) == rules.isEnabled(name, in: c.dictionary), "\(name), \(note)")
            }
        }
        var c = rules.makeContext()
        let last = list(lists - 1).upperBound
        for value in [
            "m0", "m99", "m100", "m1023", "m1024", "m1700", "m3150", "m\(last - 1)", "m\(last)", "x", "",
            "a string longer than fifteen bytes",
        ] {
            c["country"] = .string(value)
            c["plan"] = .string(value)
            agrees(c, value)
            let n = Int(value.dropFirst()) ?? -1
            for k in 0..<lists {
                #expect(rules.isEnabled(handles[k], in: c) == (list(k).contains(n) != negated(k)), "l\(k), \(value)")
            }
            #expect(rules.isEnabled(handles[lists + 1], in: c) == list(2).contains(n), "\(value)")
        }
        c["country"] = "m3350"  // in lists 24 to 33 (of which 24, 27, 30 and 33 are `not in`)
        let copy = c
        c["country"] = "m50"  // in list 0 only
        #expect(rules.isEnabled(handles[32], in: copy) && rules.isEnabled(handles[31], in: copy) && rules.isEnabled(handles[29], in: copy))
        #expect(
            !rules.isEnabled(handles[33], in: copy) && !rules.isEnabled(handles[30], in: copy) && !rules.isEnabled(handles[23], in: copy))
        #expect(!rules.isEnabled(handles[32], in: c) && !rules.isEnabled(handles[0], in: c) && rules.isEnabled(handles[3], in: c))
        agrees(copy, "copy")
        c["country"] = 5  // mistyped: every test unknown
        #expect(handles.dropLast().allSatisfy { !rules.isEnabled($0, in: c) })
        agrees(c, "mistyped")
        c["country"] = nil
        agrees(c, "absent")
        // Prepared by another rule set: read by name.
        let other = try RuleSet(source: "context { plan: string; country: string }\nflag x = true")
        agrees(other.prepare(["country": "m3350", "plan": "m250"]), "prepared elsewhere")
        #expect(rules.isEnabled(handles[lists + 1], in: other.prepare(["country": "m3350", "plan": "m250"])))
    }

    /// A string slot that large lists read answers them as by name (small strings, long
    /// ones, non-ASCII ones, set again, or copied), and an enum slot carries its case ordinal.
    @Test func stringSlotsAnswerLargeListsAndEnumSlotsCarryTheirCase() throws {
        let members = (0..<20_000).map { "m\($0)" } + ["a string longer than fifteen bytes", "ünïcödé", "ü"]
        let evens = members.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        func literal(_ strings: [String]) -> String { "[" + strings.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        let rules = try RuleSet(
            source: """
                context { country: string; build: enum(debug, alpha) }
                flag big { enabled when country in \(literal(members)) }
                flag even { enabled when country not in \(literal(evens)) }
                """)
        let big = rules.handle("big"), even = rules.handle("even")
        let slot = try #require(rules.schema?["country"]?.slot)
        func tag(_ c: PreparedContext, _ slot: Int) -> Int32 {
            c.withStorage { s in s.withUnsafeMutablePointerToElements { $0[slot].tag } }
        }
        var c = rules.makeContext()
        #expect(tag(c, slot) == -1)
        for value in [
            "m7", "m8", "m19999", "a string longer than fifteen bytes", "ünïcödé", "ü", "m20000", "", "a string longer than fifteen bytez",
        ] {
            c["country"] = .string(value)
            #expect(rules.isEnabled(big, in: c) == members.contains(value), "\(value)")
            #expect(rules.isEnabled(even, in: c) == !evens.contains(value), "\(value)")
            #expect(rules.isEnabled(big, in: c) == rules.isEnabled("big", in: ["country": .string(value)]), "\(value)")
        }
        c["country"] = "m6"
        let copy = c
        c["country"] = "elsewhere"
        #expect(rules.isEnabled(big, in: copy) && !rules.isEnabled(big, in: c))
        #expect(!rules.isEnabled(even, in: copy) && rules.isEnabled(even, in: c))
        c["country"] = 5  // mistyped: unknown
        #expect(tag(c, slot) == -1 && !rules.isEnabled(big, in: c) && !rules.isEnabled(even, in: c))
        let build = try #require(rules.schema?["build"]?.slot)
        c["build"] = "alpha"
        #expect(tag(c, build) == 1)
        c["build"] = "release"  // not a case
        #expect(tag(c, build) == -1)
    }

    /// A batch gives what one call a context gives, for large lists (one, two) and a small
    /// one, for
    /// members, non-members, absent and mistyped values, long strings, contexts prepared by
    /// another rule set, and short batches.
    @Test func batchesAgreeWithOneCallAContext() throws {
        let members = (0..<20_000).map { "member-\($0)" } + ["a string longer than fifteen bytes"]
        let plans = (0..<17_000).map { "p\($0)" }
        func list(_ strings: [String]) -> String { strings.map { "\"\($0)\"" }.joined(separator: ", ") }
        let rules = try RuleSet(
            source: """
                context { country: string; plan: string; age: int }
                flag big { enabled when country in [\(list(members))] }
                flag both { enabled when country not in [\(list(members))] and plan in [\(list(plans))] }
                flag small { enabled when country in ["US", "member-3"] or age > 40 }
                segment s = age > 10
                """)
        let flags = ["big", "both", "small"]

        var state: UInt64 = 3
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 17
        }
        var contexts: [EvaluationContext] = [[:], ["country": 5], ["country": "a string longer than fifteen bytes", "plan": "p7"]]
        for k in 0..<300 {
            let country: Value = k % 3 == 0 ? .string("elsewhere-\(k)") : .string(members[Int(next() % UInt64(members.count))])
            contexts.append(["country": country, "plan": .string("p\(next() % 20_000)"), "age": .int(k % 60)])
        }
        let other = try RuleSet(source: "context { country: string; plan: string }\nflag x = true")
        for name in flags {
            let handle = rules.handle(name)
            let prepared = contexts.enumerated().map { $0 % 7 == 6 ? other.prepare($1) : rules.prepare($1) }
            let oneByOne = prepared.map { rules.isEnabled(handle, in: $0) }
            #expect(rules.isEnabled(handle, in: prepared) == oneByOne, "\(name)")
            #expect(oneByOne.contains(true) && oneByOne.contains(false), "\(name) decides both ways")
            for count in [0, 1, 5, 8, 9] {
                #expect(rules.isEnabled(handle, in: Array(prepared.prefix(count))) == Array(oneByOne.prefix(count)), "\(name), \(count)")
            }
        }
        // Not a flag, or no declaration: the fallback for every context.
        let few = contexts.prefix(3).map(rules.prepare)
        #expect(rules.isEnabled(rules.handle("s"), in: few, default: true) == [true, true, true])
        #expect(rules.isEnabled(other.handle("x"), in: few) == [false, false, false])
    }
}
