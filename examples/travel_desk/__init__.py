"""The travel desk: a four-tool agent that answers travellers' questions about sixteen world cities (the book's
chapter "Your own agent")."""
