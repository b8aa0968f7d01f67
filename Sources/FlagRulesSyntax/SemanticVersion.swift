/// A semantic version with semver 2.0 precedence.
///
/// `1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta < 1.0.0-beta < 1.0.0-beta.2 <
/// 1.0.0-beta.11 < 1.0.0-rc.1 < 1.0.0`. Build metadata is kept for display but ignored by
/// comparison and equality.
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// One dot-separated pre-release identifier.
    package enum Identifier: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Digits only, without leading zeros; compared numerically (held as text, so any length works).
        case numeric(String)
        /// Anything else; compared by ASCII order.
        case alphanumeric(String)

        /// The identifier as written.
        package var description: String {
            switch self {
            case .numeric(let s), .alphanumeric(let s): return s
            }
        }

        /// SemVer 2.0.0 precedence: numeric identifiers by value, before alphanumeric
        /// ones, which compare by ASCII order.
        package static func < (a: Identifier, b: Identifier) -> Bool {
            switch (a, b) {
            case (.numeric(let x), .numeric(let y)):
                return x.utf8.count != y.utf8.count ? x.utf8.count < y.utf8.count : x < y
            case (.numeric, .alphanumeric): return true
            case (.alphanumeric, .numeric): return false
            case (.alphanumeric(let x), .alphanumeric(let y)):
                return x.utf8.lexicographicallyPrecedes(y.utf8)
            }
        }
    }

    /// The major version.
    public let major: Int
    /// The minor version.
    public let minor: Int
    /// The patch version.
    public let patch: Int
    /// Pre-release identifiers (`beta.2` → `[alphanumeric("beta"), numeric("2")]`).
    package let prerelease: [Identifier]
    /// Build metadata, without the `+`; ignored when comparing.
    public let build: String

    /// Parses `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]` strictly (no leading zeros, no `v`).
    /// Minor and patch may be left out, as app version strings
    /// (`CFBundleShortVersionString`) often do and as LaunchDarkly reads versions: `"3.2"`
    /// is 3.2.0, `"3"` is 3.0.0 and `"3.2-beta"` is 3.2.0-beta.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ SemanticVersion.parse($0) }) else { return nil }
        self = parsed
    }

    init(major: Int, minor: Int, patch: Int, prerelease: [Identifier], build: String) {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
        self.build = build
    }

    private static func isIdentifierByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D
    }

    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> SemanticVersion? {
        var i = 0
        let n = bytes.count
        func number() -> Int? {
            let start = i
            var value = 0
            while i < n, bytes[i] >= 0x30, bytes[i] <= 0x39 {
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(Int(bytes[i] - 0x30))
                if o1 || o2 { return nil }
                value = a
                i += 1
            }
            if i == start { return nil }
            if i - start > 1, bytes[start] == 0x30 { return nil }
            return value
        }
        guard let major = number() else { return nil }
        // `3`, `3.2` and `3.2-beta`: a short version, minor and patch 0.
        var minor = 0
        var patch = 0
        if i < n, bytes[i] == 0x2E {
            i += 1
            guard let m = number() else { return nil }
            minor = m
            if i < n, bytes[i] == 0x2E {
                i += 1
                guard let p = number() else { return nil }
                patch = p
            }
        }
        var prerelease: [Identifier] = []
        var build = ""
        if i < n, bytes[i] == 0x2D {
            i += 1
            while true {
                let start = i
                var allDigits = true
                while i < n, isIdentifierByte(bytes[i]) {
                    if bytes[i] < 0x30 || bytes[i] > 0x39 { allDigits = false }
                    i += 1
                }
                if i == start { return nil }
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                if allDigits {
                    if i - start > 1, bytes[start] == 0x30 { return nil }
                    prerelease.append(.numeric(text))
                } else {
                    prerelease.append(.alphanumeric(text))
                }
                if i < n, bytes[i] == 0x2E { i += 1; continue }
                break
            }
        }
        if i < n, bytes[i] == 0x2B {
            i += 1
            let start = i
            var partStart = i
            while i < n, isIdentifierByte(bytes[i]) || bytes[i] == 0x2E {
                if bytes[i] == 0x2E {
                    if i == partStart { return nil }
                    partStart = i + 1
                }
                i += 1
            }
            if i == start || partStart == i { return nil }
            build = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        }
        guard i == n else { return nil }
        return SemanticVersion(major: major, minor: minor, patch: patch, prerelease: prerelease, build: build)
    }

    /// The version as SemVer writes it (`1.2.3-beta.1+build.5`).
    public var description: String {
        var s = "\(major).\(minor).\(patch)"
        if !prerelease.isEmpty { s += "-" + prerelease.map(\.description).joined(separator: ".") }
        if !build.isEmpty { s += "+" + build }
        return s
    }

    /// SemVer 2.0.0 precedence: major, minor and patch numerically, then a pre-release
    /// before its release and pre-releases identifier by identifier (a shorter list first
    /// when one is a prefix of the other); build metadata is ignored.
    public static func < (a: SemanticVersion, b: SemanticVersion) -> Bool {
        if a.major != b.major { return a.major < b.major }
        if a.minor != b.minor { return a.minor < b.minor }
        if a.patch != b.patch { return a.patch < b.patch }
        switch (a.prerelease.isEmpty, b.prerelease.isEmpty) {
        case (true, true): return false
        case (true, false): return false
        case (false, true): return true
        case (false, false): return a.prerelease.lexicographicallyPrecedes(b.prerelease)
        }
    }

    /// Equal precedence: build metadata is ignored (`1.0.0+a == 1.0.0+b`).
    public static func == (a: SemanticVersion, b: SemanticVersion) -> Bool {
        a.major == b.major && a.minor == b.minor && a.patch == b.patch && a.prerelease == b.prerelease
    }

    /// Hashes what `==` compares (not the build metadata).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(major)
        hasher.combine(minor)
        hasher.combine(patch)
        hasher.combine(prerelease)
    }
}
