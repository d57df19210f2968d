print("courier-tui")
