package chronos

// GeneratedCodeVersion1 is referenced by code that chronosgen generates as
// `const _ = chronos.GeneratedCodeVersion1`. A runtime that no longer
// supports version 1 of the generated code drops this constant, and stale
// generated code then fails to compile instead of misbehaving at run time.
const GeneratedCodeVersion1 = 1
