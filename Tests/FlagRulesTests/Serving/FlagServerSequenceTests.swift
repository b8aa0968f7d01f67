import Foundation
import Testing

@testable import FlagRules
@testable import FlagRulesServer

/// `FlagServer.replaceFiles` under random sequences of adding, removing, renaming and
/// reordering served files, with good and broken updates of served and unserved stores,
/// against a small model: after every step the server serves the model's files in its
/// order (the first file declaring a name wins), each file's newest good rules, and a
/// rejected update stands exactly for the served names whose last update was broken.
@Suite struct FlagServerSequenceTests {
    /// Five stores, each declaring `shared` (true in odd versions) and its own `v<id>`.
    struct Model {
        var version = [Int](repeating: 0, count: 5)
        /// The served files in order: a name and a store's index.
        var served: [(name: String, store: Int)] = []
        /// Names whose store's last update, while served, was broken.
        var rejected: Set<String> = []

        func name(of store: Int) -> String? { served.first { $0.store == store }?.name }
    }

    static func text(_ store: Int, _ version: Int) -> String {
        "flag shared { enabled when \(version % 2 == 1) }\nvalue v\(store): int = \(version)\n"
    }

    static func evaluate(_ service: OFREPService, _ key: String) throws -> JSON? {
        let response = service.respond(
            HTTPRequest(method: "POST", path: "/ofrep/v1/evaluate/flags/\(key)", body: Array(#"{"context": {}}"#.utf8)))
        return response.status == 200 ? try JSON.parse(bytes: response.body)["value"] : nil
    }

    /// What the server serves agrees with the model.
    static func check(_ server: FlagServer, _ stores: [FlagStore], _ model: Model, step: String) throws {
        let service = server.service
        #expect(service.servedFiles.map(\.name) == model.served.map(\.name), "\(step)")
        for store in 0..<stores.count {
            let served = try evaluate(service, "v\(store)")
            #expect(served == (model.name(of: store) == nil ? nil : .int(model.version[store])), "\(step): v\(store)")
        }
        let shared = try evaluate(service, "shared")
        #expect(shared == model.served.first.map { .bool(model.version[$0.store] % 2 == 1) }, "\(step): shared")
        #expect(Set(service.served.standing.rejections.map(\.file)) == model.rejected, "\(step): rejections")
    }

    @Test(arguments: 0..<20) func randomSequencesAgreeWithTheModel(seed: UInt64) async throws {
        try await offThePool(computing: true) {
            var random = SeededGenerator(seed: seed)
            let stores = (0..<5).map { _ in FlagStore() }
            for (k, store) in stores.enumerated() { _ = try store.update(source: Self.text(k, 0), name: "s\(k).flags") }
            var model = Model()
            let server = try FlagServer(files: [], options: .init(port: 0))
            func replace() { server.replaceFiles(with: model.served.map { ($0.name, stores[$0.store]) }) }
            for step in 0..<60 {
                let store = Int(random.next() % 5)
                let action: String
                switch random.next() % 7 {
                case 0 where model.name(of: store) == nil:
                    // Served under a fresh name, at a random place.
                    let place = Int(random.next() % UInt64(model.served.count + 1))
                    model.served.insert(("f\(store)-\(step).flags", store), at: place)
                    replace()
                    action = "add s\(store)"
                case 1 where !model.served.isEmpty:
                    let removed = model.served.remove(at: Int(random.next() % UInt64(model.served.count)))
                    model.rejected.remove(removed.name)
                    replace()
                    action = "remove \(removed.name)"
                case 2 where !model.served.isEmpty:
                    let k = Int(random.next() % UInt64(model.served.count))
                    let old = model.served[k].name
                    model.served[k].name = "r\(model.served[k].store)-\(step).flags"
                    model.rejected.remove(old)
                    replace()
                    action = "rename \(old)"
                case 3 where model.served.count > 1:
                    model.served.reverse()
                    replace()
                    action = "reorder"
                case 4:
                    _ = try? stores[store].update(source: "value v\(store): int = \n", name: "s\(store).flags")
                    if let name = model.name(of: store) { model.rejected.insert(name) }
                    action = "break s\(store)"
                default:
                    model.version[store] += 1
                    _ = try stores[store].update(source: Self.text(store, model.version[store]), name: "s\(store).flags")
                    if let name = model.name(of: store) { model.rejected.remove(name) }
                    action = "edit s\(store)"
                }
                try Self.check(server, stores, model, step: "seed \(seed), step \(step): \(action)")
            }
        }
    }

    /// A store's rejected update racing its removal never leaves a rejection standing for
    /// a file no longer served.
    @Test func aRejectionRacingTheRemovalOfItsFileDoesNotStand() async throws {
        let store = FlagStore()
        _ = try store.update(source: Self.text(0, 0), name: "s0.flags")
        let server = try FlagServer(files: [], options: .init(port: 0))
        for round in 0..<200 {
            server.replaceFiles(with: [("a.flags", store)])
            async let removal: Void = server.replaceFiles(with: [])
            async let broken = try? store.update(source: "value v0: int = \(round) +\n", name: "s0.flags")
            _ = await (removal, broken)
            #expect(server.service.served.standing.rejections.isEmpty, "round \(round)")
            _ = try store.update(source: Self.text(0, round + 1), name: "s0.flags")
        }
    }
}
