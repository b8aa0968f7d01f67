import FlagRules
import Foundation

// MARK: Contexts from a service's own types
//
// What an app pays to turn its model into a context, counted beside what it pays to read
// the same data as JSON text: encoding a struct may take at most the instructions of
// `EvaluationContext(json:)` of its JSON.

/// A service's model of a signed-in user: ten stored properties, one an organisation.
struct Account: Encodable {
    struct Organisation: Encodable {
        let id: String
        let seats: Int
    }
    let userId: String
    let email: String
    let plan: String
    let country: String
    let seats: Int
    let score: Double
    let beta: Bool
    let build: BuildConfiguration
    let tags: [String]
    let org: Organisation
}

/// An account whose values vary with `i`.
func account(_ i: Int) -> Account {
    Account(
        userId: "user-\(i)", email: "user\(i)@example.com", plan: ["free", "team", "enterprise"][i % 3],
        country: ["US", "FR", "JP"][i % 3],
        seats: i % 200, score: Double(i % 100) / 4, beta: i % 2 == 0, build: [.debug, .beta, .release][i % 3], tags: ["eu", "sso", "vip"],
        org: .init(id: "org-\(i % 97)", seats: i % 500))
}

/// `EvaluationContext(encoding:)` of an `Account`, beside `EvaluationContext(json:)` of its
/// JSON text (made by `JSONEncoder` outside the count): the first held to the second's
/// instructions.
func contextFromStructRows() -> [CountedOperation] {
    let accounts = (0..<100).map(account)
    let texts = accounts.map { String(decoding: (try? JSONEncoder().encode($0)) ?? Data(), as: UTF8.self) }
    let jsonName = "EvaluationContext(json:) of the same account's JSON text"
    return [
        CountedOperation(
            name: "EvaluationContext(encoding:) of an account struct (10 properties, one a struct)", unit: "context",
            iterations: 2_000, maxInstructions: 36_000, maxAllocations: 22,
            mirror: Mirror(compared: jsonName, as: "EvaluationContext(json:)", maxRatio: 1.0)
        ) {
            { i in countedSink &+= (try? EvaluationContext(encoding: accounts[i % accounts.count]))?.count ?? 0 }
        },
        CountedOperation(name: jsonName, unit: "context", iterations: 2_000, maxInstructions: 43_000, maxAllocations: 22) {
            { i in countedSink &+= (try? EvaluationContext(json: texts[i % texts.count]))?.count ?? 0 }
        },
    ]
}
