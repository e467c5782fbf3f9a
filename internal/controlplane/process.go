package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// process is one running component: the leader of its own process group.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	pid     int
	done    chan struct{} // closed once the process has exited and its output is flushed
	waitErr error         // cmd.Wait's result; read only after done is closed

	stopping atomic.Bool // set before a deliberate stop, so the exit is not reported as a failure
}

// startProcess starts bin with args in its own process group, output appended to logPath and,
// when extra is not nil, copied there too. onExit runs (in its own goroutine) when the process
// exits.
func startProcess(name, bin string, args []string, dir, logPath string, extra io.Writer, onExit func(*process)) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logFile, "==> %s %s\n", bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = componentEnv()
	cmd.SysProcAttr = sysProcAttr()
	var lw *lineWriter
	if extra != nil {
		lw = &lineWriter{w: extra, prefix: "[" + name + "] "}
		out := io.MultiWriter(logFile, lw)
		cmd.Stdout, cmd.Stderr = out, out
	} else {
		cmd.Stdout, cmd.Stderr = logFile, logFile
	}

	// Start from a fresh goroutine: Pdeathsig fires when the starting thread exits, and only a
	// goroutine locked to its thread (which the caller's might be) makes the runtime retire one.
	started := make(chan error, 1)
	go func() { started <- cmd.Start() }()
	if err := <-started; err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}

	p := &process{name: name, logPath: logPath, cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		if lw != nil {
			lw.flush()
		}
		logFile.Close()
		close(p.done)
		if onExit != nil {
			onExit(p)
		}
	}()
	return p, nil
}

// componentEnv is the environment components run with: the caller's, without KUBECONFIG (every
// component is given its own).
func componentEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "KUBECONFIG=") {
			out = append(out, kv)
		}
	}
	return out
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, waits up to grace for the process to exit, then
// sends SIGKILL and waits; a grace of zero sends SIGKILL straight away. Whatever is left of the
// group afterwards is sent SIGKILL too. stop is safe to call more than once and after the
// process has exited.
func (p *process) stop(grace time.Duration) {
	p.stopping.Store(true)
	if grace <= 0 && !p.exited() {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		<-p.done
	}
	if !p.exited() {
		_ = syscall.Kill(-p.pid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		select {
		case <-p.done:
		case <-t.C:
			_ = syscall.Kill(-p.pid, syscall.SIGKILL)
			<-p.done
		}
		t.Stop()
	}
	// Members of the group other than the leader (none of the components spawns any).
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
}

// exitError describes how the process ended, with the tail of its log.
func (p *process) exitError() error {
	return fmt.Errorf("%s exited before it was ready (%v)%s", p.name, p.waitErr, p.logTail(30))
}

// logTail returns the last n lines of the process's log, formatted to follow an error message.
func (p *process) logTail(n int) string {
	t := tailFile(p.logPath, n)
	if t == "" {
		return ""
	}
	return fmt.Sprintf("; last lines of %s:\n%s", p.logPath, t)
}

// tailFile returns the last n lines of the file at path (at most 64 KiB), or "" when it cannot
// be read.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxTail = 64 << 10
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-maxTail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(buf, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// lineWriter writes whole lines to w, each prefixed, holding back a partial last line until it
// is completed or flushed. Writes to w from all lineWriters are serialised by logMu.
type lineWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

var logMu sync.Mutex

func (l *lineWriter) Write(b []byte) (int, error) {
	l.buf = append(l.buf, b...)
	i := bytes.LastIndexByte(l.buf, '\n')
	if i < 0 {
		return len(b), nil
	}
	var out bytes.Buffer
	for line := range bytes.Lines(l.buf[:i+1]) {
		out.WriteString(l.prefix)
		out.Write(line)
	}
	l.buf = append(l.buf[:0], l.buf[i+1:]...)
	logMu.Lock()
	defer logMu.Unlock()
	_, _ = l.w.Write(out.Bytes()) // a failing log sink must not stop the component
	return len(b), nil
}

func (l *lineWriter) flush() {
	if len(l.buf) > 0 {
		_, _ = l.Write([]byte("\n"))
	}
}
