// loopd: the run-loop job daemon. Everything lives in LoopdCore.
import Glibc
import LoopdCore

exit(DaemonMain.run(arguments: Array(CommandLine.arguments.dropFirst())))
