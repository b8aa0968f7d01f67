// The functions are inline, in include/CFlagRules.h; this file compiles the header on its
// own (SwiftPM builds a C target from its sources).
#include "CFlagRules.h"
