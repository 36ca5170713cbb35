// loopd: the run-loop job daemon. Everything lives in LoopdCore.
import LoopdCore

DaemonMain.main()
