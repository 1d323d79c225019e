package redisproc

import "syscall"

// sysProcAttr makes the kernel kill the server when the benchmark dies, so
// an interrupted run leaves no redis-server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
