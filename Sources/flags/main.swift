import FlagsCLI
import Foundation

exit(FlagsTool.run(Array(CommandLine.arguments.dropFirst())))
