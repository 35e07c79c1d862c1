filedesc://seed.arc 127.0.0.1 20190218120000 text/plain 74
1 0 newsflow seed
URL IP-address Archive-date Content-type Archive-length

dns:example.com 93.184.216.119 20190218120000 text/dns 43
20190218120000
example.com. 60 IN A 1.2.3.4
http://example.com/ 93.184.216.119 20190218120000 text/html 133
HTTP/1.0 200 OK
Content-Type: text/html

<html><head><title>Seed</title></head><body><p>An ARC record of a page.</p></body></html>
