print("partyradio")
