// Package drivertest tests a backend the way agentcli tests its own: the
// fault matrix (a CLI that crashes, hangs, ignores SIGTERM, leaves
// descendants holding its pipes, floods stderr, prints a 100 MB line,
// noise, invalid UTF-8, events from the future, a truncated last line; a
// caller that cancels, breaks out of the loop or panics in a callback),
// the live-session faults, the credential checks and the flag-injection
// property (no caller string ever becomes an option of the CLI), against
// any agentcli.Backend, in particular one built with package driver
// outside this module.
//
// # The fake CLI
//
// The tests run the backend against a fake CLI: the test binary itself,
// playing a script of what the CLI prints. The backend is pointed at the
// test binary (Options.Path) with an environment that names the script
// (FakeEnv; Kit.Setup does both), and the test binary's TestMain hands
// control to the fake when that environment is set:
//
//	func TestMain(m *testing.M) {
//		drivertest.MaybeRunFakeCLI(kit)
//		os.Exit(m.Run())
//	}
//
// The fake records its arguments, stdin, environment, working directory
// and the files its arguments name (ReadRecord), and the pid of every
// process it starts (Pids), then plays the script: a list of lines, one
// command each:
//
//	out <text>            write text and a newline to stdout
//	outraw <text>         write text without a newline
//	err <text>            write text and a newline to stderr
//	bigline <n>           write one JSON string line of n bytes to stdout
//	errflood <n>          write n bytes to stderr
//	badutf8               write a line with invalid UTF-8 to stdout
//	repeat <n> <text>     write text and a newline to stdout n times
//	sleep <duration>      sleep
//	hang                  sleep until killed
//	ignoreterm            ignore SIGTERM from now on
//	grandchild <duration> start a child that keeps stdout and stderr open
//	                      for duration, in the same process group
//	escapee <duration>    like grandchild, but in a new session (outside
//	                      the group)
//	escapee-writer <interval> <duration>
//	                      start a child in a new session that writes the
//	                      line "escapee tick" to stdout every interval for
//	                      duration (it keeps stderr open too)
//	daemon-stderr <interval> <duration>
//	                      double-fork a daemon (new session; its parent
//	                      exits at once) that writes "daemon tick" to
//	                      stderr every interval for duration (it keeps
//	                      stdout open too)
//	silent-daemon <duration>
//	                      double-fork a daemon that holds stdout and stderr
//	                      open for duration and writes nothing
//	cleanenv              children started by later commands get only the
//	                      fake's own variables (AGENTCLI_FAKE_*, GORACE),
//	                      as if exec'd with a fresh environment: no run tag
//	flood <text>          write text and a newline to stdout until killed
//	exit <code>           exit with code (the default at the end is 0)
//
// A script whose first line is "live" plays a live session's CLI: stdin
// is not read up front but line by line as the script says, and every
// line read is recorded (Record.Stdin, as read). Its commands are out,
// err, sleep, hang and exit, and:
//
//	expect <text>         read stdin lines until one contains text (at the
//	                      end of stdin the fake exits 0); it becomes the
//	                      last message
//	save <name>           remember the last message as name
//	reply <text>          out, with $ID replaced by the last message's "id"
//	                      (JSON, as sent), $RID by its "request_id" and
//	                      $ID:name by the id of the message saved as name
//	expectn <n> <text>    read stdin until n lines containing text came
//	repeatn <n> <text>    write text n times, $N replaced by 1..n
//	deaf                  never read stdin again
//	drain                 read stdin to its end, then exit 0
//
// Before it plays, the fake judges its command line as the real CLI
// would, with the Kit's Args (or CheckArgs), and refuses one the CLI
// would refuse: a backend that builds a command line its CLI rejects
// fails every case.
//
// # Writing a backend's tests
//
// A Kit says how to make the backend and how to script its CLI's output:
// the lines of a successful run, of a run cut short before its terminal
// event, and of a run whose terminal line is truncated; optionally the
// CLI's option grammar (Args), a credential for the fake's runs (Env) and
// its live protocol (Live). The tests are then one line each:
//
//	func TestFaultMatrix(t *testing.T)     { drivertest.FaultMatrix(t, kit) }
//	func TestHostileRequests(t *testing.T) { drivertest.HostileRequests(t, kit) }
//	func TestLiveFaults(t *testing.T)      { drivertest.LiveFaults(t, kit) }
//
// and CheckCredentials, CheckNoHomeWrites and ReplayRoundTrip check the
// credential detection, that a run writes nothing into the home
// directory, and that a wire log replays as the run went. The module
// github.com/agentcli/agentcli/examples/outside-backend is a complete
// backend, for a CLI of its own, tested this way.
//
// The fault cases run one after another and look at process and goroutine
// state globally: do not run them in parallel with other tests that start
// processes. They need a Unix system; the fake CLI does not run elsewhere.
package drivertest
