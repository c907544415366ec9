"""Security: listeners' protocols, TLS material, SASL mechanisms (PLAIN, SCRAM) and credentials."""
