print("flags")
