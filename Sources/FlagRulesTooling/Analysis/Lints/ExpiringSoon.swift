import FlagRules
import Foundation

extension Lint {
    /// FR111 (with `--expiring-within N`): an `@expires` date N days ahead or fewer, so that
    /// its owner cleans the flag up before it expires (a passed date is the checker's own
    /// `expired` warning).
    static let expiringSoon = Lint(
        code: "FR111", name: "expiring-soon", summary: "an @expires date within the days asked for"
    ) { input in
        guard let days = input.options.expiringWithinDays else { return [] }
        let horizon = input.today.addingTimeInterval(Double(days) * 86_400)
        return input.checked.declarations.compactMap { d in
            guard let expires = d.expires, expires >= input.today, expires <= horizon else { return nil }
            let left = Int((expires.timeIntervalSince(input.today) / 86_400).rounded(.up))
            let day = String(DateTime.format(expires).prefix(10))
            return .warning(
                "FR111", "'\(d.name)' expires on \(day), in \(left) day\(left == 1 ? "" : "s")", at: d.range,
                help: d.owner.map { "remind \($0): remove it, or move its expiry date" } ?? "remove it, or move its expiry date")
        }
    }
}
