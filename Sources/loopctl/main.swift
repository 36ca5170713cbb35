// loopctl: the CLI for loopd. All of it lives in LoopctlCommands.
import LoopctlCommands

Loopctl.main()
