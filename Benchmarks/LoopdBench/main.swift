print("LoopdBench")
