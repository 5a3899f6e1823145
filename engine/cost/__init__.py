"""The bill of materials, capital cost, power and energy cost of an expanded fabric."""
