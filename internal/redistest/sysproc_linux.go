package redistest

import "syscall"

// sysProcAttr makes the kernel kill the server when the test binary dies, so
// an interrupted `go test` leaves no redis-server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
