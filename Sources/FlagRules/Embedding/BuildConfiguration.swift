/// The build an app runs as: `debug`, `alpha`, `beta`, `release`, or a name of the app's
/// own. Rules read it as the `build` attribute (`enabled when build in [debug, alpha]`);
/// give it to a store once, in its base context:
///
/// ```swift
/// let store = FlagStore(source: .file(rulesURL), baseContext: BuildConfiguration.context)
/// ```
public struct BuildConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The name rules compare with (`build in [debug, alpha]`).
    public let name: String

    /// A configuration named `name`.
    public init(_ name: String) { self.name = name }

    /// A developer's build.
    public static let debug = BuildConfiguration("debug")
    /// An internal build, for the team.
    public static let alpha = BuildConfiguration("alpha")
    /// A build for testers (TestFlight, an internal track).
    public static let beta = BuildConfiguration("beta")
    /// The build users run.
    public static let release = BuildConfiguration("release")

    /// The build this process runs as: `debug` when the code was compiled with `DEBUG`
    /// defined (SwiftPM's and Xcode's debug configuration), else `release`, until the app
    /// sets it (an alpha or beta build sets it at launch, before making its store).
    public static var current: BuildConfiguration {
        get { chosen.withLock { $0 } }
        set { chosen.withLock { $0 = newValue } }
    }

    /// `current` as a context: `["build": "<name>"]`, to merge under every evaluation.
    public static var context: EvaluationContext { ["build": .string(current.name)] }

    /// The configuration the compiler's `DEBUG` condition gives.
    static var compiled: BuildConfiguration {
        #if DEBUG
            return .debug
        #else
            return .release
        #endif
    }

    private static let chosen = Locked(compiled)

    /// The name.
    public var description: String { name }
}

extension BuildConfiguration: Codable {
    /// A configuration from its name, encoded as a string (`"beta"`).
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the name as a string, so that a context struct holding the build encodes it
    /// as the `build` attribute rules compare (`"build": "beta"`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
