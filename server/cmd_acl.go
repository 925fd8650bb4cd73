package server

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/acl"
	"github.com/cuckoohash/cuckoo/server/internal/command"
	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/integer"
)

// Users and permissions: Redis's ACL (package acl holds the users and the
// rule syntax).
//
// Protocol. A connection holds the acl.Ref of the user it authenticated as
// (nil before AUTH when the default user needs a password); every command
// loads the user from it (one atomic load) and checks, unless the user is
// unrestricted, the command's bit and the keys its key specs name, before
// anything runs: a denied command changes nothing. Changes to a user apply
// to its connections from their next command; a deleted user's connections
// are closed. Denials are recorded for ACL LOG.

// aclCommands binds this file's commands to their rows of Redis's table, by name.
func aclCommands() (b []binding) {
	b = append(b, binding{name: "acl|setuser", run: aclSetUser})
	b = append(b, binding{name: "acl|getuser", run: aclGetUser})
	b = append(b, binding{name: "acl|deluser", run: aclDelUser})
	b = append(b, binding{name: "acl|users", run: aclUsers})
	b = append(b, binding{name: "acl|list", run: aclList})
	b = append(b, binding{name: "acl|whoami", run: aclWhoami})
	b = append(b, binding{name: "acl|cat", run: aclCat})
	b = append(b, binding{name: "acl|log", run: aclLog})
	b = append(b, binding{name: "acl|save", run: aclSave})
	b = append(b, binding{name: "acl|load", run: aclLoad})
	b = append(b, binding{name: "acl|genpass", run: aclGenpass})
	b = append(b, binding{name: "acl|dryrun", run: aclDryrun})
	b = append(b, binding{name: "acl|help", run: func(s *Server, cl *client, a [][]byte) { command.WriteHelp(cl.wr, aclHelp) }})
	return b
}

var aclHelp = []string{
	"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
	"HELP",
	"    Print this help.",
}

// aclLogMax is acllog-max-len's default.
const aclLogMax = 128

// loadUsers loads the ACL file at start, if there is one: its users replace
// the default ones (a default user it defines replaces requirepass's).
func (s *Server) loadUsers() error {
	if s.cfg.ACLFile == "" {
		return nil
	}
	err := s.loadACLFile()
	if errors.Is(err, os.ErrNotExist) {
		s.log.Info("ACL file not found: starting with the default user; ACL SAVE creates it", "file", s.cfg.ACLFile)
		return nil
	}
	return err
}

// setDefaultPassword is requirepass: the default user's password, or nopass
// when empty, as Redis's requirepass sets it.
func (s *Server) setDefaultPassword(pass string) {
	rules := []string{"nopass"}
	if pass != "" {
		rules = []string{"resetpass", ">" + pass}
	}
	if err := s.users.SetUser("default", rules...); err != nil {
		panic(err) // cannot happen: the rules are valid
	}
}

func (s *Server) loadACLFile() error {
	b, err := os.ReadFile(s.cfg.ACLFile)
	if err != nil {
		return err
	}
	defs, err := acl.ParseFile(s.cfg.ACLFile, string(b), s.userCatalog)
	if err != nil {
		return err
	}
	if err := s.users.Replace(defs); err != nil {
		return err
	}
	s.closeDeletedUsers()
	s.closeUnpermittedSubscribers(nil)
	return nil
}

// authDefault authenticates a new connection as the default user when that
// user needs no password, as Redis does.
func (s *Server) authDefault(cl *client) {
	ref := s.users.Get("default")
	if u := ref.Load(); u.Enabled && u.NoPass {
		cl.user.Store(ref)
	}
}

// authenticate checks name and pass, and on success makes cl that user. A
// failure is recorded in ACL LOG and answered as Redis does.
func (s *Server) authenticate(cl *client, name, pass []byte) error {
	ref := s.users.Get(string(name))
	if ref == nil || !ref.Load().CheckPassword(string(pass)) {
		s.denied(cl, "auth", "AUTH", string(name))
		return replyErr("WRONGPASS invalid username-password pair or user is disabled.")
	}
	cl.user.Store(ref)
	return nil
}

// userName is the name of cl's user, "" before authentication.
func (cl *client) userName() string {
	if ref := cl.user.Load(); ref != nil {
		return ref.Load().Name
	}
	return ""
}

// denial is why user u may not run cmd on args: "" if it may, else what
// ACL LOG records as the reason (acl.DeniedCommand, DeniedKey or
// DeniedChannel) and, for a key or channel, which (acl.User.Denial).
// Commands that need no authentication are never denied.
func denial(u *acl.User, cmd *bound, args [][]byte) (reason string, object []byte) {
	if cmd.noAuth {
		return "", nil
	}
	var chans [][]byte
	pattern := false
	if cmd.spec.Flags&command.PubSub != 0 {
		chans, pattern = acl.Channels(cmd.spec.Name, args)
	}
	return u.Denial(int(cmd.id), cmd.spec, args, chans, pattern)
}

// permitted returns the error that refuses cmd for cl, or "": NOAUTH before
// authentication, NOPERM for a command or key the user may not touch.
func (s *Server) permitted(cl *client, cmd *bound, args [][]byte) error {
	ref := cl.user.Load()
	if ref == nil {
		return replyErr("NOAUTH Authentication required.")
	}
	u := ref.Load()
	if u.Unrestricted() {
		return nil
	}
	switch reason, object := denial(u, cmd, args); reason {
	case acl.DeniedCommand:
		s.denied(cl, reason, cmd.spec.Name, u.Name)
		return replyErr(fmt.Sprintf("NOPERM User %s has no permissions to run the '%s' command", u.Name, cmd.spec.Name))
	case acl.DeniedKey, acl.DeniedChannel:
		s.denied(cl, reason, string(object), u.Name)
		return replyErr("NOPERM No permissions to access a " + reason)
	}
	return nil
}

// denied records a denial for ACL LOG.
func (s *Server) denied(cl *client, reason, object, user string) {
	context := "toplevel"
	if cl.ks.InExec() {
		context = "multi"
	}
	info := ""
	if cl.nc != nil {
		info = s.clientLine(cl)
	}
	s.aclLog.Add(acl.LogEntry{Reason: reason, Context: context, Object: object, Username: user, ClientInfo: info}, time.Now())
}

// closeDeletedUsers closes the connections of users that no longer exist.
func (s *Server) closeDeletedUsers() {
	for _, c := range s.clientList() {
		if ref := c.user.Load(); ref != nil && ref.Deleted() {
			c.killed.Store(true)
			c.nc.Close()
		}
	}
}

func aclSetUser(s *Server, cl *client, a [][]byte) {
	rules := make([]string, len(a)-3)
	for i, r := range a[3:] {
		rules[i] = string(r)
	}
	if err := s.users.SetUser(string(a[2]), rules...); err != nil {
		s.writeErr(cl, replyErr("ERR "+err.Error()))
		return
	}
	s.closeUnpermittedSubscribers(cl)
	cl.wr.WriteString("OK")
}

func aclGetUser(s *Server, cl *client, a [][]byte) {
	ref := s.users.Get(string(a[2]))
	if ref == nil {
		cl.wr.WriteNull()
		return
	}
	u := ref.Load()
	cl.wr.WriteMap(6)
	cl.wr.WriteBulkString("flags")
	flags := u.Flags()
	cl.wr.WriteSet(len(flags))
	for _, f := range flags {
		cl.wr.WriteBulkString(f)
	}
	cl.wr.WriteBulkString("passwords")
	pw := u.Passwords()
	cl.wr.WriteArray(len(pw))
	for _, p := range pw {
		cl.wr.WriteBulkString(p)
	}
	for _, kv := range [][2]string{{"commands", u.Commands()}, {"keys", u.Keys()}, {"channels", u.Channels()}} {
		cl.wr.WriteBulkString(kv[0])
		cl.wr.WriteBulkString(kv[1])
	}
	cl.wr.WriteBulkString("selectors")
	cl.wr.WriteArray(0)
}

func aclDelUser(s *Server, cl *client, a [][]byte) {
	names := make([]string, len(a)-2)
	for i, n := range a[2:] {
		names[i] = string(n)
	}
	n, err := s.users.DelUsers(names...)
	if err != nil {
		s.writeErr(cl, err)
		return
	}
	s.closeDeletedUsers()
	cl.wr.WriteInt(n)
}

func aclUsers(s *Server, cl *client, a [][]byte) {
	users := s.users.Users()
	cl.wr.WriteArray(len(users))
	for _, u := range users {
		cl.wr.WriteBulkString(u.Name)
	}
}

func aclList(s *Server, cl *client, a [][]byte) {
	users := s.users.Users()
	cl.wr.WriteArray(len(users))
	for _, u := range users {
		cl.wr.WriteBulkString(u.Describe())
	}
}

func aclWhoami(s *Server, cl *client, a [][]byte) { cl.wr.WriteBulkString(cl.userName()) }

// ACL CAT [category]
func aclCat(s *Server, cl *client, a [][]byte) {
	if len(a) == 2 {
		cl.wr.WriteArray(len(acl.Categories))
		for _, c := range acl.Categories {
			cl.wr.WriteBulkString(c)
		}
		return
	}
	if len(a) > 3 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'acl|cat' command"))
		return
	}
	names, ok := s.cmds.acl[moduleACL(s.filterDefaults().Compat)].InCategory(strings.ToLower(strings.TrimPrefix(string(a[2]), "@")))
	if !ok {
		s.writeErr(cl, replyErr(fmt.Sprintf("ERR Unknown category '%s'", printable(a[2], 128))))
		return
	}
	cl.wr.WriteArray(len(names))
	for _, n := range names {
		cl.wr.WriteBulkString(n)
	}
}

// ACL LOG [count | RESET]
func aclLog(s *Server, cl *client, a [][]byte) {
	n := 10
	switch {
	case len(a) > 3:
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'acl|log' command"))
		return
	case len(a) == 3 && strings.EqualFold(string(a[2]), "reset"):
		s.aclLog.Reset()
		cl.wr.WriteString("OK")
		return
	case len(a) == 3:
		v, ok := integer.Parse(a[2])
		if !ok {
			s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
			return
		}
		if v < 0 {
			s.writeErr(cl, replyErr("ERR value is out of range, must be positive"))
			return
		}
		n = int(min(v, math.MaxInt32))
	}
	entries := s.aclLog.Entries(n)
	now := time.Now()
	cl.wr.WriteArray(len(entries))
	for _, e := range entries {
		cl.wr.WriteMap(10)
		for _, kv := range []struct {
			k string
			v any
		}{
			{"count", e.Count}, {"reason", e.Reason}, {"context", e.Context}, {"object", e.Object},
			{"username", e.Username}, {"age-seconds", now.Sub(e.Created).Seconds()},
			{"client-info", e.ClientInfo}, {"entry-id", e.ID},
			{"timestamp-created", e.Created.UnixMilli()}, {"timestamp-last-updated", e.Updated.UnixMilli()},
		} {
			cl.wr.WriteBulkString(kv.k)
			switch v := kv.v.(type) {
			case int:
				cl.wr.WriteInt(v)
			case int64:
				cl.wr.WriteInt64(v)
			case float64:
				cl.wr.WriteDouble(v)
			case string:
				cl.wr.WriteBulkString(v)
			}
		}
	}
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

// ACL SAVE writes the users to the ACL file, atomically (config.WriteFile:
// a temporary file, fsync, rename, fsync of the directory).
func aclSave(s *Server, cl *client, a [][]byte) {
	if s.cfg.ACLFile == "" {
		s.writeErr(cl, replyErr(errNoACLFile))
		return
	}
	if err := config.WriteFile(s.cfg.ACLFile, []byte(s.users.File())); err != nil {
		s.log.Error("ACL SAVE", "file", s.cfg.ACLFile, "err", err)
		s.writeErr(cl, replyErr("ERR There was an error trying to save the ACLs. Please check the server logs for more information"))
		return
	}
	cl.wr.WriteString("OK")
}

// ACL LOAD replaces the users by the file's, all or none.
func aclLoad(s *Server, cl *client, a [][]byte) {
	if s.cfg.ACLFile == "" {
		s.writeErr(cl, replyErr(errNoACLFile))
		return
	}
	if err := s.loadACLFile(); err != nil {
		s.writeErr(cl, replyErr("ERR Error loading ACLs, leaving the current users unchanged: "+strings.ReplaceAll(err.Error(), filepath.Dir(s.cfg.ACLFile)+"/", "")))
		return
	}
	cl.wr.WriteString("OK")
}

// ACL GENPASS [bits]: bits (default 256) of the system's secure random
// source, in hex.
func aclGenpass(s *Server, cl *client, a [][]byte) {
	bits := 256
	if len(a) == 3 {
		v, ok := integer.Parse(a[2])
		if !ok {
			s.writeErr(cl, replyErr("ERR value is not an integer or out of range"))
			return
		}
		bits = int(max(min(v, math.MaxInt32), -1)) // GenPass refuses what is out of its range
	} else if len(a) > 3 {
		s.writeErr(cl, replyErr("ERR wrong number of arguments for 'acl|genpass' command"))
		return
	}
	pass, err := acl.GenPass(bits)
	if err != nil {
		s.writeErr(cl, replyErr("ERR "+err.Error()))
		return
	}
	cl.wr.WriteBulkString(pass)
}

// ACL DRYRUN user command [arg...]
func aclDryrun(s *Server, cl *client, a [][]byte) {
	ref := s.users.Get(string(a[2]))
	if ref == nil {
		s.writeErr(cl, replyErr(fmt.Sprintf("ERR User '%s' not found", printable(a[2], 128))))
		return
	}
	req := a[3:]
	cmd, err := s.cmds.lookup(req)
	if cmd == nil {
		var arity *arityError
		if errors.As(err, &arity) {
			s.writeErr(cl, err)
		} else {
			s.writeErr(cl, replyErr(fmt.Sprintf("ERR Command '%s' not found", printable(a[3], 128))))
		}
		return
	}
	u := ref.Load()
	switch reason, object := denial(u, cmd, req); reason {
	case acl.DeniedCommand:
		cl.wr.WriteBulkString(fmt.Sprintf("User %s has no permissions to run the '%s' command", u.Name, cmd.spec.Name))
		return
	case acl.DeniedKey, acl.DeniedChannel:
		cl.wr.WriteBulkString(fmt.Sprintf("User %s has no permissions to access the '%s' %s", u.Name, object, reason))
		return
	}
	cl.wr.WriteString("OK")
}
