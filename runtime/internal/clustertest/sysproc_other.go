//go:build !linux

package clustertest

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
