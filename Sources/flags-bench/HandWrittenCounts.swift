import FlagRules

// MARK: Counts beside hand-written Swift
//
// Each of FlagRules' fastest paths has a row of hand-written Swift beside it: the same
// logic over the same checked values, read by position (as a prepared context's slots), so
// that "how far from hand-written Swift" is a ratio of instruction counts, which gates like
// a ceiling. Each hand-written row is checked to give FlagRules' answers on every context
// before it is counted.

/// The row another is compared with (hand-written Swift beside a FlagRules fastest path),
/// what the report calls it, and the most instructions the row may take for each of its.
struct Mirror {
    let compared: String
    let label: String
    let maxRatio: Double

    init(compared: String, as label: String = "hand-written", maxRatio: Double) {
        self.compared = compared
        self.label = label
        self.maxRatio = maxRatio
    }
}

/// Organisations as a service's model has them: seats, and tags as a list.
let memberSchema = """
    context {
      userId : string
      org    : { id : string, seats : int, tags : [string] }
    }
    """

/// A user with an organisation whose seats and tags vary from user to user.
func member(_ u: User, _ i: Int) -> EvaluationContext {
    let tags: [Value] = (0..<(i % 5)).map { .string(["beta", "eu", "vip", "sso", "trial"][($0 + i) % 5]) }
    return [
        "userId": .string(u.userId), "org": .object(["id": .string("org-\(i % 97)"), "seats": .int(i * 37 % 200), "tags": .list(tags)]),
    ]
}

/// The hand-written logic of the rows below, over a context's values by position.
enum HandWrittenOnMembers {
    static let names = ["userId", "org"]
    static let userId = 0, org = 1
    static let splitKey = RolloutKey(salt: "f", seed: 86_028_157)

    @inline(never)
    static func seats(_ c: Slots) -> Bool {
        guard case .object(let o)? = c.values[org], case .int(let seats)? = o["seats"] else { return false }
        return seats > 100
    }

    @inline(never)
    static func vip(_ c: Slots) -> Bool {
        guard case .object(let o)? = c.values[org], case .list(let tags)? = o["tags"] else { return false }
        return tags.contains(.string("vip"))
    }

    /// `split(userId) { a: 50%, b: 50% }`: weights of 500 in 1,000; the target is the
    /// split hash modulo 1,000, plus one.
    @inline(never)
    static func splitA(_ c: Slots) -> Bool {
        guard case .string(let u)? = c.values[userId] else { return false }
        return Int(splitKey.hash(for: u) % 1_000) + 1 <= 500
    }
}

/// The rows of FlagRules' fastest paths beside hand-written Swift: each pair a FlagRules
/// row naming its mirror and the hand-written row.
func handWrittenPairs(_ users: [User], _ dictionaries: [EvaluationContext]) -> [CountedOperation] {
    func evaluation(_ name: String, _ maxInstructions: Double, mirror: Mirror? = nil, _ make: @escaping () -> (Int) -> Bool)
        -> CountedOperation
    {
        CountedOperation(
            name: name, unit: "evaluation", iterations: 20_000, maxInstructions: maxInstructions, maxAllocations: 0, mirror: mirror
        ) {
            let evaluate = make()
            return { i in if evaluate(i % 2_000) { countedSink &+= 1 } }
        }
    }
    /// FlagRules' fastest path and the hand-written logic (each a closure of its own, so
    /// that the bench's share is the same in both), checked to agree on every context.
    func pair(
        _ rule: String, count: Int, ceiling: (Double, Double), maxRatio: Double, fastest: @escaping (Int) -> Bool,
        handWritten: @escaping (Int) -> Bool
    )
        -> [CountedOperation]
    {
        for i in 0..<count where fastest(i) != handWritten(i) {
            fatalError("flags-bench: the hand-written row of '\(rule)' disagrees with FlagRules on context \(i)")
        }
        let handName = "\(rule), hand-written Swift (the same values, by position)"
        return [
            evaluation("\(rule), fastest (handle, prepared context)", ceiling.0, mirror: Mirror(compared: handName, maxRatio: maxRatio)) {
                fastest
            },
            evaluation(handName, ceiling.1) { handWritten },
        ]
    }
    /// A declaration's rules, its handle, the contexts prepared, and their values by position.
    func prepared(_ source: String, _ declaration: String, _ contexts: [EvaluationContext], _ names: [String])
        -> (RuleSet, DeclarationHandle, [PreparedContext], [Slots])
    {
        let rules = load(source)
        let prepared = contexts.map(rules.prepare)
        return (rules, rules.handle(declaration), prepared, prepared.map { Slots($0, names) })
    }
    let members = users.enumerated().map { member($1, $0) }
    let flag = { (rule: String) in memberSchema + "\nflag f { enabled when \(rule) }\n" }
    let (seed, seedHandle, seedContexts, seedSlots) = prepared(
        schema + "\nflag seed { enabled when \(seedRule) }\n", "seed", dictionaries, HandWrittenOnSlots.names)
    let (seats, seatsHandle, seatsContexts, seatsSlots) = prepared(flag("org.seats > 100"), "f", members, HandWrittenOnMembers.names)
    let (vip, vipHandle, vipContexts, vipSlots) = prepared(flag("org.tags contains \"vip\""), "f", members, HandWrittenOnMembers.names)
    let (split, splitHandle, splitContexts, splitSlots) = prepared(
        memberSchema + "\nvariant f [a, b] { split(userId) { a: 50%, b: 50% } }\n", "f", members, HandWrittenOnMembers.names)
    return pair(
        "seed rule", count: users.count, ceiling: (530, 500), maxRatio: 1.1,
        fastest: { seed.isEnabled(seedHandle, in: seedContexts[$0]) }, handWritten: { HandWrittenOnSlots.seed(seedSlots[$0]) })
        + pair(
            "a nested comparison (org.seats > 100)", count: users.count, ceiling: (500, 600), maxRatio: 1.3,
            fastest: { seats.isEnabled(seatsHandle, in: seatsContexts[$0]) }, handWritten: { HandWrittenOnMembers.seats(seatsSlots[$0]) })
        + pair(
            "a nested list contains (org.tags contains \"vip\")", count: users.count, ceiling: (850, 1_050), maxRatio: 1.3,
            fastest: { vip.isEnabled(vipHandle, in: vipContexts[$0]) }, handWritten: { HandWrittenOnMembers.vip(vipSlots[$0]) })
        + pair(
            "a split (variant by userId, 50/50)", count: users.count, ceiling: (750, 650), maxRatio: 1.3,
            fastest: { split.variant(splitHandle, in: splitContexts[$0]) == "a" },
            handWritten: { HandWrittenOnMembers.splitA(splitSlots[$0]) })
}
