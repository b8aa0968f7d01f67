// The language's text (lexer, parser, diagnostics, versions) is a module of its own, which
// the build plugin's tool reads declarations with; an app that imports FlagRules sees it whole.
@_exported import FlagRulesSyntax
