// The functions are inline, in the header; this file makes the target a C library.
#include "FlagRulesAtomics.h"
