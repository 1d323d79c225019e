// Package group is a chronosgen golden case: one trigger shared by several
// jobs, declared on the package clause and on a type.
//
//chronos:group id=nightly cron="0 0 3 * * ?" tz=Europe/Paris misfire=doNothing queue=batch late-after=15m
package group
