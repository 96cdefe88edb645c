package harness

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Suite declares what a test package needs before its tests run, and holds what Main started
// for them. Each package's TestMain is one call:
//
//	var suite = &harness.Suite{Name: "top", ControlPlane: &harness.ControlPlane{...}, RunOperator: true}
//	func TestMain(m *testing.M) { harness.Main(m, suite) }
//
// Main starts, in this order: the scratch directory, the operator binary, BeforeControlPlane,
// the control plane and its admin client, BeforeOperator, the operator process, Ready; it runs
// the tests, prints the operator's log when they failed, and stops everything in reverse.
type Suite struct {
	// Name prefixes the set-up's messages ("<name> suite: ...").
	Name string
	// ControlPlane, when set, is the kube-apiserver and etcd the tests share.
	ControlPlane *ControlPlane
	// NeedsBinary makes OperatorBinary's path available as Binary; RunOperator implies it.
	NeedsBinary bool
	// RunOperator runs the operator binary against the control plane with the flags of
	// Cluster.OperatorArgs and OperatorArgs after them.
	RunOperator  bool
	OperatorArgs []string
	// OperatorMetrics serves the operator's metrics on a free port (MetricsAddr); else none.
	OperatorMetrics bool
	// OperatorStopGrace is how long the operator may take to stop (20 s when zero).
	OperatorStopGrace time.Duration
	// Lazy defers the control plane and the operator to the first Start, so that tests that
	// need neither run without them.
	Lazy bool
	// Logger is controller-runtime's logger while the suite runs; the zero value discards.
	Logger logr.Logger
	// BeforeControlPlane runs first, once Dir exists: it may write files that flags name and
	// set ControlPlane's flags.
	BeforeControlPlane func(s *Suite) error
	// BeforeOperator runs once the control plane and the admin client are up.
	BeforeOperator func(s *Suite) error
	// Ready runs last: it copies state into package variables and waits for what the tests
	// need.
	Ready func(s *Suite) error

	// Dir is a scratch directory removed after the tests.
	Dir string
	// Binary is the operator binary (NeedsBinary or RunOperator).
	Binary string
	// Cluster is the running control plane; Client an admin client of it (Scheme's types).
	Cluster *Cluster
	Client  client.WithWatch
	// Operator is the operator process (RunOperator), MetricsAddr its metrics address.
	Operator    *Operator
	MetricsAddr string

	once     sync.Once
	startErr error
	cleanups []func() error
}

// Main runs the suite's tests and exits with their code (see Suite).
func Main(m *testing.M, s *Suite) { os.Exit(Run(m, s)) }

// Run is Main without the exit: it returns the code Main exits with. A set-up or tear-down
// error is printed and makes the code non-zero.
func Run(m *testing.M, s *Suite) (code int) {
	logger := s.Logger
	if logger.GetSink() == nil {
		logger = logr.Discard()
	}
	ctrllog.SetLogger(logger)
	defer removeBuiltBinary()
	defer func() {
		if err := s.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s suite: %v\n", s.Name, err)
			if code == 0 {
				code = 1
			}
		}
	}()
	if !s.Lazy {
		if err := s.start(); err != nil {
			fmt.Fprintf(os.Stderr, "%s suite: %v\n", s.Name, err)
			return 1
		}
	}
	code = m.Run()
	if code != 0 && s.Operator != nil {
		fmt.Fprintf(os.Stderr, "operator log:\n%s\n", s.Operator.ReadLog())
	}
	return code
}

// Start starts the suite once, for a Lazy suite's first test that needs it; a failure fails
// this test and every later one that calls Start.
func (s *Suite) Start(t testing.TB) {
	t.Helper()
	s.once.Do(func() { s.startErr = s.start() })
	if s.startErr != nil {
		t.Fatalf("%s suite: %v", s.Name, s.startErr)
	}
}

// AddCleanup registers f to run after the tests, before what was started ahead of it stops.
func (s *Suite) AddCleanup(f func() error) { s.cleanups = append(s.cleanups, f) }

// start runs the set-up steps in order.
func (s *Suite) start() error {
	dir, err := os.MkdirTemp("", "apf-"+s.Name+"-")
	if err != nil {
		return err
	}
	s.Dir = dir
	s.AddCleanup(func() error { return os.RemoveAll(dir) })
	for _, step := range []func() error{
		s.findBinary, s.hook(s.BeforeControlPlane), s.startControlPlane, s.hook(s.BeforeOperator),
		s.startOperator, s.hook(s.Ready),
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Suite) hook(f func(*Suite) error) func() error {
	return func() error {
		if f == nil {
			return nil
		}
		return f(s)
	}
}

func (s *Suite) startControlPlane() error {
	if s.ControlPlane == nil {
		return nil
	}
	c, err := StartControlPlane(*s.ControlPlane)
	if err != nil {
		return err
	}
	s.Cluster = c
	s.AddCleanup(c.Stop)
	s.Client, err = client.NewWithWatch(c.Config, client.Options{Scheme: Scheme()})
	return err
}

func (s *Suite) findBinary() (err error) {
	if s.NeedsBinary || s.RunOperator {
		s.Binary, err = OperatorBinary()
	}
	return err
}

func (s *Suite) startOperator() (err error) {
	if !s.RunOperator {
		return nil
	}
	if s.Cluster == nil {
		return errors.New("RunOperator needs a ControlPlane")
	}
	s.MetricsAddr = "0"
	if s.OperatorMetrics {
		if s.MetricsAddr, err = FreeAddr(); err != nil {
			return err
		}
	}
	args := append(s.Cluster.OperatorArgs(s.MetricsAddr), s.OperatorArgs...)
	if s.Operator, err = s.Cluster.StartOperator(s.Binary, args...); err != nil {
		return err
	}
	grace := s.OperatorStopGrace
	if grace == 0 {
		grace = 20 * time.Second
	}
	s.AddCleanup(func() error { return s.Operator.Stop(grace) })
	return nil
}

// stop runs the cleanups in reverse order and joins their errors.
func (s *Suite) stop() error {
	var errs []error
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		errs = append(errs, s.cleanups[i]())
	}
	s.cleanups = nil
	return errors.Join(errs...)
}
