import CLws
let _pre = cairn_lws_pre()
