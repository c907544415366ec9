"""Drivers for the non-Python clients (sarama in Go, kafkajs in node) and the Python side that runs them."""
