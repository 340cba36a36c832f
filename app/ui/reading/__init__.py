"""Reading pages: the detection/OCR worker and its host, run control and statistics, the device status."""
