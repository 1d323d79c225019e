package chronos

// GeneratedCodeVersion1 is referenced by code that chronosgen generates as
// `const _ = chronos.GeneratedCodeVersion1`. A runtime that no longer
// supports version 1 of the generated code drops this constant, and stale
// generated code then fails to compile instead of misbehaving at run time.
//
// Once a version is released, generated code that needs runtime API the
// release lacks refers to a new constant (GeneratedCodeVersion2, …), so that
// an older runtime fails with "undefined: chronos.GeneratedCodeVersion2"
// rather than with whatever API is missing. Version 1 is what the first
// release supports (AddFunc included).
const GeneratedCodeVersion1 = 1
