package chronos_test

import (
	"fmt"
	"strings"

	chronos "github.com/chronos-go/chronos/runtime"
)

// The ACL user of the default namespace, as a line for redis-cli (replace
// PASSWORD). docs/security.md quotes this output; go test checks it.
func ExampleACLRules() {
	fmt.Println("ACL SETUSER chronos on >PASSWORD " + strings.Join(chronos.ACLRules(), " "))
	// Output: ACL SETUSER chronos on >PASSWORD resetkeys resetchannels -@all +ping +client|id +client|unblock +cluster|slots +command +asking +eval +evalsha +script|load +multi +exec +subscribe +publish +pubsub|numsub +wait +info|replication +scan +del +unlink +rename +exists +get +set +incr +pexpire +pttl +type +hdel +hexists +hget +hgetall +hkeys +hlen +hmget +hscan +hset +hsetnx +lindex +lpush +lrange +ltrim +sadd +scard +sismember +smembers +srandmember +srem +zadd +zcard +zrange +zrangebyscore +zrem +zremrangebyrank +zremrangebyscore +zrevrange +zscan +zscore +zmscore +xack +xadd +xautoclaim +xclaim +xdel +xgroup|create +xgroup|delconsumer +xinfo|consumers +xinfo|groups +xlen +xpending +xrange +xreadgroup +xrevrange ~{chronos}:* ~{chronos:p[0-9]*}:* &{chronos}:* &{chronos:p[0-9]*}:*
}

// One user for two namespaces: the commands once, the patterns of both.
func ExampleACLRules_twoNamespaces() {
	rules := chronos.ACLRules("orders", "billing")
	fmt.Println(strings.Join(rules[len(rules)-8:], " "))
	// Output: ~{orders}:* ~{orders:p[0-9]*}:* ~{billing}:* ~{billing:p[0-9]*}:* &{orders}:* &{orders:p[0-9]*}:* &{billing}:* &{billing:p[0-9]*}:*
}
